package iampolicy

import (
	"regexp"
	"strings"
)

// SitesHeader carries, on each AWS call a test stack's client makes, the
// adapter functions on the calling goroutine's stack, innermost first,
// comma-separated: where in the code the call comes from. The local IAM
// check records them with the call, so that a test can tell, for every
// function, which recorded calls its binary can make (every adapter
// function of the call's path is linked in it), not only the calls a suite
// made as that function.
const SitesHeader = "X-Chat-Sites"

// module is this module's path.
const module = "github.com/chatbridge/chat"

// AdapterPackages are the packages whose functions make the AWS calls: a
// call's sites are its stack's frames in them.
var AdapterPackages = []string{module + "/pkg/dynamo", module + "/pkg/sqsqueue", module + "/pkg/wsapi", module + "/pkg/s3bucket"}

// closureSuffix is what the compiler appends to a function's name for the
// closures, goroutines and deferred calls inside it.
var closureSuffix = regexp.MustCompile(`(\.(func|gowrap|deferwrap)\d+)+$`)

// Site returns the adapter function that a symbol or stack frame name
// belongs to, as the linker names it ("<package path>.(*T).Method" or
// "<package path>.Func"), closures folded into the function that encloses
// them and type arguments left out; false for a name outside
// AdapterPackages.
func Site(name string) (string, bool) {
	if i := strings.IndexByte(name, '['); i >= 0 {
		if j := strings.LastIndexByte(name, ']'); j > i {
			name = name[:i] + name[j+1:]
		}
	}
	name = closureSuffix.ReplaceAllString(name, "")
	slash := strings.LastIndexByte(name, '/')
	dot := strings.IndexByte(name[slash+1:], '.')
	if dot < 0 {
		return "", false
	}
	pkg := name[:slash+1+dot]
	for _, p := range AdapterPackages {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return name, true
		}
	}
	return "", false
}
