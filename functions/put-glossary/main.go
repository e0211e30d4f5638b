// Command put-glossary is PutGlossaryFunction:
// PUT /api/v1/workspaces/{workspace_id}/glossary.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/glossaryapi"
)

func main() { httpfn.Run("PutGlossaryFunction", glossaryapi.Put) }
