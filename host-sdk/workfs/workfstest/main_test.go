package workfstest

import (
	"testing"

	"github.com/rulebroker/rulebroker/internal/testmain"
)

func TestMain(m *testing.M) { testmain.Main(m) }
