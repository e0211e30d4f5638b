// Temporary: measures exec to first /next poll of binaries, interleaved.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	bins := os.Args[1:]
	runs := map[string][]time.Duration{}
	for i := 0; i < 41; i++ {
		for _, b := range bins {
			runs[b] = append(runs[b], once(b))
		}
	}
	base := med(runs[bins[0]])
	for _, b := range bins {
		m := med(runs[b])
		fmt.Printf("%-40s %6.2f ms %.2fx\n", b, float64(m.Microseconds())/1000, float64(m)/float64(base))
	}
}

func med(d []time.Duration) time.Duration { s := slices.Clone(d); slices.Sort(s); return s[len(s)/2] }

func once(bin string) time.Duration {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	got := make(chan time.Time, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/next") {
			select {
			case got <- time.Now():
			default:
			}
		}
		time.Sleep(time.Second)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String())
	start := time.Now()
	cmd.Start()
	var d time.Duration
	select {
	case t := <-got:
		d = t.Sub(start)
	case <-time.After(5 * time.Second):
		d = time.Hour
	}
	cmd.Process.Kill()
	cmd.Wait()
	return d
}
