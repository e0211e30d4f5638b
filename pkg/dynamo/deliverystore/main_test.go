package deliverystore_test

import (
	"os"
	"testing"

	"github.com/chatbridge/chat/internal/stacktest"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }
