// Command minimal is the smallest aws-lambda-go function: the baseline the
// cold init of each function is compared with.
package main

import "github.com/aws/aws-lambda-go/lambda"

func main() { lambda.Start(func() {}) }
