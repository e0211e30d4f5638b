package httpapi_test

import (
	"os"
	"testing"

	"github.com/chatbridge/chat/internal/testlog"
)

func TestMain(m *testing.M) {
	testlog.Quiet()
	os.Exit(m.Run())
}
