// Package lambdart is an in-test implementation of the AWS Lambda Runtime
// API, version 2018-06-01: the protocol a custom runtime (provided.al2023)
// speaks with Lambda at AWS_LAMBDA_RUNTIME_API. Start launches a function's
// real bootstrap binary as Lambda does, Invoke hands it one event through
// its long-polling GET /next and returns what it POSTs back, and the
// Runtime records how long the process took from exec to its first poll,
// which is the function's cold init.
//
// It mirrors what github.com/aws/aws-lambda-go's runtime client expects:
// the invocation headers, 202 Accepted for a response or an error, the
// error body {"errorMessage","errorType","stackTrace"}, and errors raised
// while streaming a response, which that client reports in HTTP trailers.
// Status codes and error types for requests the runtime gets wrong (an
// unknown request id, a response sent twice, a payload over 6 MiB) follow
// Lambda's Runtime Interface Emulator.
package lambdart
