package motoserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestS3FromChromium is the guest page's use of the bucket in a real
// browser, from another loopback origin: an XMLHttpRequest posts a
// FormData to a presigned POST and reads the answer's status (CORS on
// success and on refusal), and an <img> shows the file from a presigned
// GET.
func TestS3FromChromium(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("SKIPPED: chromium is not installed; the browser's upload did not run")
	}
	st := newS3Stack(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>guest</title>")
	}))
	defer page.Close()

	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var pic bytes.Buffer
	if err := png.Encode(&pic, img); err != nil {
		t.Fatal(err)
	}
	key := "a/W1/C1/U9"
	p := st.presignPost(t, "Uploader", key, "image/png", pic.Len())
	fields, _ := json.Marshal(formFields(p, "image/png"))

	profile, err := os.MkdirTemp("", "motoserver-browser-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.UserDataDir(profile), chromedp.Flag("disable-background-networking", true))
	defer cancel()
	tab, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()
	tab, cancelTimeout := context.WithTimeout(tab, 60*time.Second)
	defer cancelTimeout()

	post := func(extra int) string {
		t.Helper()
		var got string
		script := fmt.Sprintf(`new Promise(resolve => {
			const bytes = Uint8Array.from(atob(%q), c => c.charCodeAt(0));
			const file = new Uint8Array(bytes.length + %d); file.set(bytes);
			const fd = new FormData();
			for (const [k, v] of Object.entries(%s)) fd.append(k, v);
			fd.append("file", new Blob([file], {type: "image/png"}), "cat.png");
			const x = new XMLHttpRequest();
			x.open("POST", %q);
			x.onload = () => resolve(x.status + " " + (x.getResponseHeader("ETag") || "-"));
			x.onerror = () => resolve("network error");
			x.send(fd);
		})`, base64.StdEncoding.EncodeToString(pic.Bytes()), extra, fields, p.URL)
		if err := chromedp.Run(tab, chromedp.Evaluate(script, &got, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		})); err != nil {
			t.Fatalf("post from the page: %v", err)
		}
		return got
	}
	if err := chromedp.Run(tab, chromedp.Navigate(page.URL)); err != nil {
		t.Fatalf("open the page: %v", err)
	}
	if got := post(1); got != "400 -" {
		t.Fatalf("a file one byte too large: the page read %q, want 400 (a refusal it can read)", got)
	}
	if got := post(0); len(got) < 5 || got[:4] != "204 " || got == "204 -" {
		t.Fatalf("the upload: the page read %q, want 204 with the exposed ETag", got)
	}

	get, err := s3.NewPresignClient(st.client("Reader")).PresignGetObject(context.Background(), &s3.GetObjectInput{
		Bucket: aws.String(st.bucket), Key: aws.String(key), ResponseContentType: aws.String("image/png")}, s3.WithPresignExpires(15*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var size string
	script := fmt.Sprintf(`new Promise(resolve => {
		const i = new Image();
		i.onload = () => resolve(i.naturalWidth + "x" + i.naturalHeight);
		i.onerror = () => resolve("error");
		i.src = %q;
	})`, get.URL)
	if err := chromedp.Run(tab, chromedp.Evaluate(script, &size, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
		return p.WithAwaitPromise(true)
	})); err != nil {
		t.Fatalf("load the image: %v", err)
	}
	if size != "3x2" {
		t.Fatalf("the <img> of the presigned GET: got %q, want 3x2", size)
	}
}
