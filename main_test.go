package chatbundle_test

import (
	"os"
	"testing"

	"github.com/chatbridge/chat/internal/stacktest"
)

// TestMain starts the local stack that docs/api.md's examples run against
// (TestAPIDocExamples).
func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }
