package motoserver

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
)

// transactionTarget is the X-Amz-Target of DynamoDB's TransactWriteItems.
const transactionTarget = "DynamoDB_20120810.TransactWriteItems"

// isolator is a reverse proxy in front of moto_server that runs each
// TransactWriteItems alone. moto rolls a failed transaction back by
// restoring a copy of the whole table taken when the transaction began,
// without a lock (moto/dynamodb/models/__init__.py, transact_write_items),
// so a transaction that fails while other requests write erases their
// writes. DynamoDB's transactions are serializable; the proxy gives moto
// that isolation: a transaction holds the lock exclusively, every other
// request shares it.
type isolator struct {
	mu    sync.RWMutex
	proxy *httputil.ReverseProxy
}

func newIsolator(target string) (*isolator, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	return &isolator{proxy: httputil.NewSingleHostReverseProxy(u)}, nil
}

func (i *isolator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Amz-Target") == transactionTarget {
		i.mu.Lock()
		defer i.mu.Unlock()
	} else {
		i.mu.RLock()
		defer i.mu.RUnlock()
	}
	i.proxy.ServeHTTP(w, r)
}

// serveIsolator listens on 127.0.0.1:port and proxies to target.
func serveIsolator(port int, target string) (*http.Server, string, error) {
	iso, err := newIsolator(target)
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", itoa(port)))
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: iso}
	go srv.Serve(ln)
	return srv, "http://" + ln.Addr().String(), nil
}
