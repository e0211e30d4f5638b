package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/guestpage"
	"github.com/chromedp/chromedp"
)

// testPNG is a valid width by height PNG of noise (so that it does not
// compress to nothing).
func testPNG(t *testing.T, width, height int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	r := rand.New(rand.NewPCG(1, 2))
	for y := range height {
		for x := range width {
			img.Set(x, y, color.RGBA{uint8(r.IntN(256)), uint8(128 + x%128), uint8(r.IntN(256)), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withBucket gives the test server an attachments bucket and tells the
// guest page function its name as the template does (ATTACHMENTS_BUCKET).
// The bucket is the stack's when it has one (a.Bucket or
// ATTACHMENTS_BUCKET already set), else one created here on the local
// stack's S3 with the template's CORS rule (any origin: every request is
// presigned). It skips the test when the local stack serves no S3.
func withBucket(t *testing.T, name string) func(*app.App) {
	return func(a *app.App) {
		t.Helper()
		if a.Bucket == "" {
			a.Bucket = os.Getenv(awsenv.EnvBucket)
		}
		if a.Bucket != "" {
			t.Setenv(awsenv.EnvBucket, a.Bucket)
			return
		}
		c := s3.NewFromConfig(a.AWS, func(o *s3.Options) { o.UsePathStyle = true })
		ctx := context.Background()
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
			t.Skipf("SKIPPED: the local AWS serves no S3 bucket (%v); the attachments browser test needs the local S3 (branch i32-s3local)", err)
		}
		if _, err := c.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String(name), CORSConfiguration: &s3types.CORSConfiguration{
			CORSRules: []s3types.CORSRule{{AllowedMethods: []string{"POST", "GET", "HEAD"}, AllowedOrigins: []string{"*"}, AllowedHeaders: []string{"*"}, ExposeHeaders: []string{"ETag"}, MaxAgeSeconds: aws.Int32(3600)}},
		}}); err != nil {
			t.Logf("bucket CORS not set (%v): the local S3 must answer the page's origin by itself", err)
		}
		a.Bucket = name
		t.Setenv(awsenv.EnvBucket, name) // the guest page function's, read when its handler is built
	}
}

// joinGuest opens the room's page in tab and joins as nickname reading lang.
func joinGuest(t *testing.T, tab context.Context, page, nickname, lang string) {
	t.Helper()
	runIn(t, tab, "open the page", chromedp.Navigate(page), chromedp.WaitVisible("#nickname", chromedp.ByID))
	runIn(t, tab, "join",
		chromedp.SendKeys("#nickname", nickname, chromedp.ByID),
		chromedp.Evaluate(`document.getElementById("language").value = ""`, nil),
		chromedp.SendKeys("#language", lang, chromedp.ByID),
		chromedp.Click("#join button", chromedp.ByQuery))
	waitFor(t, tab, nickname+" is live", `document.getElementById("status").textContent.startsWith("Live")`)
}

// TestGuestPageAttachmentsInChromium: a guest on a phone-width screen
// attaches a PNG (its upload's progress shown, S3 answering the page's
// presigned POST), describes it and posts it; another guest reading
// French on a wide screen sees it inline (a realtime push), fitting the
// bubble, with its alt text, and still when the message's translation
// lands (a message.updated push); a text file is a link with its name (markup
// shown as text) and size; a file of a refused type is refused next to
// it and blocks the send until removed; a deleted message shows no file.
// Nothing loads from outside the test server and the bucket, and the
// pages' Content-Security-Policy reports nothing.
func TestGuestPageAttachmentsInChromium(t *testing.T) {
	bucket := "page-" + strings.ToLower(chat.NewIDs().New(time.Now()))
	s := startRealtimeServer(t, withBucket(t, bucket))
	b := newBrowser(t, s.URL)
	// The bucket's origin, as the page's policy names it: the pages may
	// load from it, and from nowhere else but the test server.
	origin := guestpage.BucketOrigin(s.a.Bucket, os.Getenv(awsenv.EnvRegion), os.Getenv(awsenv.EnvEndpoint))
	if origin == "" {
		t.Fatalf("no bucket origin for bucket %q", s.a.Bucket)
	}
	b.also = append(b.also, origin)
	shots := os.Getenv("GUEST_PAGE_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	page := s.URL + "/rooms/" + demoRoom
	marta, elodie := b.tab(390, 844), b.tab(1280, 800)
	joinGuest(t, marta, page, "Marta", "es")
	joinGuest(t, elodie, page, "Élodie", "fr")

	var label string
	runIn(t, marta, "the attach button's name", chromedp.Evaluate(`document.getElementById("attach").getAttribute("aria-label")`, &label))
	if label != "Attach files" {
		t.Fatalf("the attach button is named %q to screen readers, want %q", label, "Attach files")
	}

	dir := t.TempDir()
	const filename = "<img src=x onerror=alert(1)>.png" // user content: text, never markup
	pngPath := filepath.Join(dir, filename)
	if err := os.WriteFile(pngPath, testPNG(t, 160, 120), 0o600); err != nil {
		t.Fatal(err)
	}
	// Every value the progress bar takes, as it takes it.
	runIn(t, marta, "watch the progress", chromedp.Evaluate(`window.progressSeen = [];
		new MutationObserver((ms) => { for (const m of ms) if (m.target.tagName === "PROGRESS") window.progressSeen.push(m.target.value); })
			.observe(document.getElementById("pending"), { subtree: true, attributes: true, attributeFilter: ["value"] }); true`, nil))
	runIn(t, marta, "choose the PNG", chromedp.SetUploadFiles("#file", []string{pngPath}, chromedp.ByID, chromedp.NodeReady))
	waitFor(t, marta, "the pending file shows its name, size and a labelled progress bar",
		`(() => { const li = document.querySelector("#pending li"); if (!li) return false;
			return li.querySelector(".filename").textContent === `+js(filename)+` && /\d B|kB/.test(li.querySelector(".size").textContent) &&
				li.querySelector("progress").getAttribute("aria-label").endsWith(`+js(filename)+`) &&
				li.querySelector("input.alt").placeholder === "Describe the image"; })()`)
	waitFor(t, marta, "the upload finishes", `!!document.querySelector("#pending li.done") && document.querySelector("#pending progress").value === 100 && !document.getElementById("send").disabled`)
	var seen []float64
	runIn(t, marta, "progress seen", chromedp.Evaluate(`window.progressSeen`, &seen))
	t.Logf("the progress bar took the values %v", seen)
	if len(seen) == 0 || seen[len(seen)-1] != 100 {
		t.Fatalf("the progress bar went through %v, want it to end at 100", seen)
	}

	// A refused type is refused next to it, and the send waits for its removal.
	exe := filepath.Join(dir, "setup.exe")
	if err := os.WriteFile(exe, []byte("MZ not really"), 0o600); err != nil {
		t.Fatal(err)
	}
	runIn(t, marta, "choose an .exe", chromedp.SetUploadFiles("#file", []string{exe}, chromedp.ByID, chromedp.NodeReady))
	waitFor(t, marta, "the .exe is refused next to it", `document.querySelector("#pending li.failed .error")?.textContent.includes("cannot be sent")`)
	runIn(t, marta, "try to send", chromedp.Click("#send", chromedp.ByID))
	waitFor(t, marta, "the send is held", `document.getElementById("post-error").textContent.includes("Remove the files")`)
	runIn(t, marta, "remove the .exe", chromedp.Click("#pending li.failed .pending-head button", chromedp.ByQuery))
	waitFor(t, marta, "one file left", `document.querySelectorAll("#pending li").length === 1`)

	const alt = "Un gato naranja durmiendo en la ventana"
	const caption = "Mirad quién vino a vernos"
	runIn(t, marta, "describe and post",
		chromedp.SendKeys("#pending input.alt", alt, chromedp.ByQuery),
		chromedp.SendKeys("#content", caption, chromedp.ByID),
		chromedp.Click("#send", chromedp.ByID))
	waitFor(t, marta, "posted: the box and the files are cleared", `document.getElementById("content").value === "" && document.getElementById("pending").hidden`)
	theirs := `[...document.querySelectorAll("#messages li")].find(li => li.querySelector(".content")?.textContent === ` + js(caption) + `)`
	shown := func(tab context.Context, who, altText string) {
		t.Helper()
		waitFor(t, tab, who+" sees the image inline, loaded, fitting, described",
			`(() => { const li = `+theirs+`; const img = li?.querySelector(".attachments img"); if (!img) return false;
				const l = document.getElementById("messages").getBoundingClientRect(), r = img.getBoundingClientRect(), m = li.getBoundingClientRect();
				return img.complete && img.naturalWidth === 160 && img.alt === `+js(altText)+` &&
					r.width > 0 && r.right <= m.right + 0.5 && m.right <= l.right + 0.5 && document.documentElement.scrollWidth <= window.innerWidth &&
					!document.querySelector("#messages img[src='x']"); })()`)
	}
	shown(marta, "Marta", alt)
	shown(elodie, "Élodie", alt)
	var id string
	runIn(t, elodie, "the message's id", chromedp.Evaluate(`(`+theirs+`).id.slice(2)`, &id))

	// The message's translation lands (TRANSLATOR=none here; the test
	// stores it as the translation function would): the message.updated
	// push renders Élodie's message anew, in French, its image still shown
	// with its alt text (no translation of it is stored: the original).
	const french = "Regardez qui est venu nous voir"
	if err := storetest.New(s.a.DB, s.a.Table).Translation.SaveTranslations(context.Background(), demoSupport, id,
		[]chat.Translation{{MessageID: id, Language: "fr", Content: french, SourceLanguage: "es", CreatedAt: time.Now()}}, true); err != nil {
		t.Fatal(err)
	}
	theirs = `document.getElementById("m-` + id + `")`
	waitFor(t, elodie, "Élodie reads the message in French", `document.querySelector("#m-`+id+` .content")?.textContent === `+js(french))
	shown(elodie, "Élodie, after the push", alt)
	shown(marta, "Marta, still", alt)
	screenshot(t, marta, shots, "guest-attach-es-390px.png")
	screenshot(t, elodie, shots, "guest-attach-fr-1280px.png")

	// A text file is a link with its name, as text, and its size.
	const txtName = "<i>notas.txt"
	txt := filepath.Join(dir, txtName)
	if err := os.WriteFile(txt, []byte("hola, mundo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runIn(t, elodie, "attach a text file", chromedp.SetUploadFiles("#file", []string{txt}, chromedp.ByID, chromedp.NodeReady))
	waitFor(t, elodie, "uploaded", `!!document.querySelector("#pending li.done") && !document.getElementById("send").disabled`)
	runIn(t, elodie, "send it alone", chromedp.Click("#send", chromedp.ByID))
	waitFor(t, marta, "Marta sees the file as a link with its size",
		`[...document.querySelectorAll("#messages .attachments li.file")].some(f => f.querySelector("a.filename")?.textContent === `+js(txtName)+
			` && f.querySelector(".size").textContent === " (12 B)" && f.querySelector("a").href.startsWith("http") && !f.querySelector("i"))`)

	// Marta deletes her message: its image goes from Élodie's page.
	runIn(t, marta, "delete", chromedp.Evaluate(`document.querySelector("#m-`+id+` .actions button:nth-of-type(2)").click() || true`, nil))
	waitFor(t, elodie, "the deleted message shows no file", `!!document.querySelector("#m-`+id+`.deleted") && !document.querySelector("#m-`+id+` .attachments")`)
	b.check()
}
