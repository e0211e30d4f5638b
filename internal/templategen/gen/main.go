// Command gen rewrites template.yaml's generated block (see templategen)
// and the registry of the HTTP functions' constructors
// (templategen.HandlersFile). Run from the module root: `make template`.
package main

import (
	"fmt"
	"os"

	"github.com/chatbridge/chat/internal/templategen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	const path = "template.yaml"
	in, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := templategen.Generate(in)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return err
	}
	reg, err := templategen.Handlers(".")
	if err != nil {
		return err
	}
	return os.WriteFile(templategen.HandlersFile, reg, 0o644)
}
