// Command gen rewrites template.yaml's generated block (see templategen).
package main

import (
	"fmt"
	"os"

	"github.com/chatbridge/chat/internal/templategen"
)

func main() {
	const path = "template.yaml"
	in, err := os.ReadFile(path)
	if err == nil {
		var out []byte
		if out, err = templategen.Generate(in); err == nil {
			err = os.WriteFile(path, out, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
