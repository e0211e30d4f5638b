// Package chatbundle embeds the repository files that the local runner and
// the tests read at run time: the SAM template (the one source of the table,
// queue and route definitions) and the demo fixture that `make run` applies.
package chatbundle

import _ "embed"

// Template is template.yaml.
//
//go:embed template.yaml
var Template []byte

// DemoFixture is fixtures/demo.json, the data `make run` applies.
//
//go:embed fixtures/demo.json
var DemoFixture []byte
