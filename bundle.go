// Package chatbundle embeds the repository files that the local runner and
// the tests read at run time: the SAM template (the one source of the table,
// queue and route definitions), the demo fixture that `make run` applies and
// the OpenAPI document that every response of the tests is held to.
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

// OpenAPI is openapi.yaml, the OpenAPI 3.1 description of every route;
// `chatctl serve` serves it at GET /openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
