// Package e2e tests the deployed artefacts themselves: every function of
// the Makefile's FUNCTIONS list is built as the Makefile builds it (for the
// host's architecture), started as Lambda starts a provided.al2023
// bootstrap through the in-test Runtime API of internal/lambdart, and
// invoked with its events/ samples against moto. It also holds the arm64
// size budget and the cold init benchmark of issue 7.
//
// The package has no API: everything is in its tests.
package e2e
