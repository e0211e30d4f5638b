package translation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/text/language"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/glossary"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/protect"
)

// Lexicon gives each workspace's words that are never translated.
type Lexicon interface {
	// Vocabulary returns the workspace's names (members', guests', bots'
	// and channels'; Keep and Fixed are the service's) and its glossary,
	// as of now: a glossary replaced before the call applies to it.
	Vocabulary(ctx context.Context, workspaceID string) (Vocabulary, error)
}

// Vocabulary is what a workspace protects.
type Vocabulary struct {
	Names    protect.Names
	Glossary glossary.Glossary
}

// MemoryKey identifies one remembered unit: its form as sent (protected
// spans are placeholders, so "Build 4812 passed" and "Build 4813 passed"
// are one unit), the pair, the form's kind and the glossary version it was
// made with.
type MemoryKey struct {
	WorkspaceID string
	Source      string
	Target      string
	Glossary    string
	Form        Form
	Text        string
}

// Memory is the translation memory: translated units per workspace and
// language pair. A unit remembered is not sent to the translator again.
type Memory interface {
	// Recall returns the remembered translations of keys; a key not
	// remembered is absent.
	Recall(ctx context.Context, keys []MemoryKey) (map[MemoryKey]string, error)
	// Remember stores translations of keys.
	Remember(ctx context.Context, entries map[MemoryKey]string) error
}

// Process translates job's message into the language of every reader of
// its channel who does not read it already, and stores the translations.
// The job carries ids; the message's content comes with the one read that
// says what is already translated.
//
// The content, and each attachment's alt text alike, is parsed into
// translation units (a sentence of a line, a list item, a table cell) and
// protected spans (package protect): code, links, mentions, emoji, paths,
// identifiers, numbers, the workspace's names and glossary terms. Spans
// never reach a translator and come back byte-identical (fixed glossary
// terms rendered for the target). A message with nothing to translate
// (only spans, emoji, chat shorthand, in its content and alt texts) costs
// no translator call and no budget.
//
// The message's language, and each sentence's when it is long enough, is
// found by the Detector (else it is the job's SourceLanguage), from its
// content, or from its alt texts when the content has nothing to
// translate; the alt texts are in the content's language. A unit
// already in a reader's language is left as it is for that reader; a
// target every unit of which is in that language gets no translation. A
// unit the Memory remembers is not sent. The budget is charged the
// characters of what is sent, before it is sent. A unit whose spans do not
// come back is shown untranslated; a translation whose content and alt
// texts are all the original is not stored (translated stays false).
//
// A message is finished when no translation failed: its untranslated
// marker is then cleared in the write that records its languages, so the
// sweep never queues it again.
//
// Errors: a *FailedError when some translations failed (the others are
// stored first); the store's or translator's error, wrapped, when nothing
// could be done.
func (s *Service) Process(ctx context.Context, job messages.Job) error {
	if job.SkipTranslation {
		// Its writer marked nothing: there is nothing to finish.
		return nil
	}
	hinted, err := s.Translator.Targets(ctx, job.SourceLanguage)
	if err != nil {
		return fmt.Errorf("translation: targets from %q for message %s: %w", job.SourceLanguage, job.MessageID, err)
	}
	if hinted.Len() == 0 && s.Detector == nil {
		return s.finish(ctx, job)
	}
	readers, err := s.Store.Readers(ctx, job.ChannelID, s.now())
	if err != nil {
		return fmt.Errorf("translation: readers of channel %s: %w", job.ChannelID, err)
	}
	tags := readerTags(readers)
	if s.Detector == nil && !needsOther(hinted, tags, job.SourceLanguage) {
		// Without detection the message is in its job's language, which
		// every reader reads: the message is not even read.
		return s.finish(ctx, job)
	}
	stored, err := s.Store.Message(ctx, job.ChannelID, job.MessageID)
	if chat.IsCode(err, chat.ENotFound) {
		// The message is gone: translating it would spend calls on
		// translations nobody can read.
		s.log().InfoContext(ctx, "translation: message no longer exists; nothing to do", "message_id", job.MessageID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("translation: stored message %s: %w", job.MessageID, err)
	}
	if stored.Revision > job.Rev() {
		// An edit replaced this content: its own job translates the new one.
		s.log().InfoContext(ctx, "translation: job of an earlier revision; nothing to do", "message_id", job.MessageID,
			"job_revision", job.Rev(), "revision", stored.Revision)
		return nil
	}
	job.Content = stored.Content
	// The texts to translate: the content, then each attachment's alt text
	// (contract section 17: alt texts are translated like the content).
	texts := append([]string{stored.Content}, stored.AltTexts...)
	var vocab Vocabulary
	if s.Lexicon != nil && anyText(texts) {
		if vocab, err = s.Lexicon.Vocabulary(ctx, job.WorkspaceID); err != nil {
			return fmt.Errorf("translation: names and glossary of workspace %s: %w", job.WorkspaceID, err)
		}
	}
	names := vocab.Names
	if stored.AuthorName != "" {
		names.Members = append(names.Members[:len(names.Members):len(names.Members)], stored.AuthorName)
	}
	names.Keep = append(names.Keep[:len(names.Keep):len(names.Keep)], vocab.Glossary.Keep...)
	docs := make([]*protect.Document, len(texts))
	translatable := false
	for i, t := range texts {
		docs[i] = protect.Parse(t, names)
		translatable = translatable || docs[i].Translatable()
	}
	if !translatable {
		s.log().InfoContext(ctx, "translation: nothing to translate outside protected spans", "message_id", job.MessageID)
		return s.finish(ctx, job)
	}

	p := &plan{svc: s, job: job, texts: texts, names: names, glossary: vocab.Glossary, form: s.form(), langCache: map[string]string{}}
	p.detect(docs, tags)
	if err := p.targets(ctx, docs, tags, stored.Done); err != nil {
		return err
	}
	if err := p.recall(ctx); err != nil {
		return err
	}
	ok, err := s.Budget.Charge(ctx, job, p.chars(), s.now())
	if err != nil {
		return err
	}
	if !ok {
		// The budget is spent: the message is delivered untranslated and
		// is finished, so the sweep does not queue it again.
		return s.finish(ctx, job)
	}
	p.call(ctx)
	p.remember(ctx)
	saves := p.assemble(ctx)
	finished := len(p.failed.Languages) == 0
	if len(saves) > 0 || finished && stored.Marked {
		if err := s.save(ctx, job, saves, finished); err != nil {
			return fmt.Errorf("translation: save %d translation(s) of message %s: %w", len(saves), job.MessageID, err)
		}
	}
	if !finished {
		p.failed.MessageID = job.MessageID
		return &p.failed
	}
	return nil
}

// form is the Form the translator honours.
func (s *Service) form() Form {
	if f, ok := s.Translator.(Former); ok {
		return f.Form()
	}
	return Placeholders
}

// readerTags returns the readers' distinct language tags, sorted.
func readerTags(readers []Reader) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range readers {
		if r.Language != "" && !seen[r.Language] {
			seen[r.Language] = true
			out = append(out, r.Language)
		}
	}
	sort.Strings(out)
	return out
}

// needsOther reports whether some reader's language, among langs, is not
// source's.
func needsOther(langs *Languages, tags []string, source string) bool {
	for _, tag := range tags {
		if t, ok := langs.Target(tag); ok && !sameLanguage(t, source) {
			return true
		}
	}
	return false
}

// sameLanguage reports whether tags a and b name the same language (es and
// es-MX do; a reader of either reads the other's text as their own).
func sameLanguage(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ta, err1 := language.Parse(a)
	tb, err2 := language.Parse(b)
	if err1 != nil || err2 != nil {
		return strings.EqualFold(a, b)
	}
	ba, _ := ta.Base()
	bb, _ := tb.Base()
	return ba == bb
}

// plan is the work of translating one message.
type plan struct {
	svc *Service
	job messages.Job
	// texts are the message's texts: texts[0] its content, texts[1+i] the
	// alt text of its attachment i ("" for none).
	texts    []string
	names    protect.Names
	glossary glossary.Glossary
	form     Form

	// language is the message's language: detected, else the job's.
	language   string
	detected   bool
	langCache  map[string]string // a unit's text -> its language
	candidates []string
	sources    map[string]*Languages

	work   []*targetWork
	calls  map[MemoryKey]*callResult
	failed FailedError
}

// targetWork is the translation into one target.
type targetWork struct {
	target string
	// pieces[i] is the translation of the plan's texts[i]; nil when that
	// text stays as it is.
	pieces []*piece
}

// piece is the translation of one text into one target.
type piece struct {
	doc   *protect.Document
	forms []string
	// keys[k] is unit k's memory key, nil when the unit stays as it is.
	keys []*MemoryKey
}

type callResult struct {
	text       string
	remembered bool
	done       bool
	err        error
}

// candidates are the languages a message of this channel may be in: the
// author's (or workspace's) and the readers'.
func candidates(source string, tags []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range append([]string{source}, tags...) {
		tag, err := language.Parse(t)
		if err != nil {
			continue
		}
		b, _ := tag.Base()
		if !seen[b.String()] {
			seen[b.String()] = true
			out = append(out, b.String())
		}
	}
	return out
}

// detect finds the message's language from its content, or from its alt
// texts when the content has nothing to translate (a message that is only
// attachments).
func (p *plan) detect(docs []*protect.Document, tags []string) {
	p.language = p.job.SourceLanguage
	if p.svc.Detector == nil {
		return
	}
	from := docs[:1]
	if !docs[0].Translatable() {
		from = docs[1:]
	}
	var all strings.Builder
	for _, doc := range from {
		for k := range doc.Units() {
			if doc.UnitTranslatable(k) {
				all.WriteString(doc.UnitText(k))
				all.WriteByte('\n')
			}
		}
	}
	cands := candidates(p.job.SourceLanguage, tags)
	p.candidates = cands
	if l, ok := p.svc.Detector.Detect(all.String(), cands); ok {
		p.language = l
	}
}

// unitLanguage is the language of a unit's text: its own when a detector
// is confident of it, else the message's.
func (p *plan) unitLanguage(text string) string {
	if l, ok := p.langCache[text]; ok {
		return l
	}
	l := p.language
	if p.svc.Detector != nil {
		if d, ok := p.svc.Detector.Detect(text, p.candidates); ok {
			l = d
		}
	}
	p.langCache[text] = l
	return l
}

// pairs returns the targets the translator has from source.
func (p *plan) pairs(ctx context.Context, source string) (*Languages, error) {
	if l, ok := p.sources[source]; ok {
		return l, nil
	}
	l, err := p.svc.Translator.Targets(ctx, source)
	if err != nil {
		return nil, fmt.Errorf("translation: targets from %q for message %s: %w", source, p.job.MessageID, err)
	}
	if p.sources == nil {
		p.sources = map[string]*Languages{}
	}
	p.sources[source] = l
	return l, nil
}

// targets decides, for each reader's language not done yet, which units
// of each text (docs[i] is texts[i] parsed) are sent and which stay as
// they are.
func (p *plan) targets(ctx context.Context, docs []*protect.Document, tags []string, done map[string]bool) error {
	// The languages of the units, the message's first.
	langs := []string{p.language}
	for _, doc := range docs {
		for k := range doc.Units() {
			if !doc.UnitTranslatable(k) {
				continue
			}
			if l := p.unitLanguage(doc.UnitText(k)); !slices.Contains(langs, l) {
				langs = append(langs, l)
			}
		}
	}
	targets := map[string]bool{}
	for _, tag := range tags {
		for _, src := range langs {
			l, err := p.pairs(ctx, src)
			if err != nil {
				return err
			}
			if t, ok := l.Target(tag); ok {
				targets[t] = true
				break
			}
		}
	}
	sorted := make([]string, 0, len(targets))
	for t := range targets {
		if !done[t] {
			sorted = append(sorted, t)
		}
	}
	sort.Strings(sorted)
	for _, t := range sorted {
		w := &targetWork{target: t, pieces: make([]*piece, len(docs))}
		fixed := p.fixedFor(t)
		sent := false
		for i, doc := range docs {
			if !doc.Translatable() {
				continue
			}
			if len(fixed) > 0 {
				names := p.names
				names.Fixed = fixed
				doc = protect.Parse(p.texts[i], names)
			}
			pc, err := p.piece(ctx, doc, t)
			if err != nil {
				return err
			}
			if pc != nil {
				w.pieces[i], sent = pc, true
			}
		}
		if sent {
			p.work = append(p.work, w)
		}
	}
	return nil
}

// piece decides which units of doc are sent for target t; nil when none
// is.
func (p *plan) piece(ctx context.Context, doc *protect.Document, t string) (*piece, error) {
	pc := &piece{doc: doc, forms: doc.Placeholders()}
	if p.form == HTML {
		pc.forms = doc.HTML()
	}
	pc.keys = make([]*MemoryKey, len(pc.forms))
	sent := false
	for k := range pc.forms {
		if !doc.UnitTranslatable(k) {
			continue
		}
		src := p.unitLanguage(doc.UnitText(k))
		if sameLanguage(src, t) {
			continue
		}
		l, err := p.pairs(ctx, src)
		if err != nil {
			return nil, err
		}
		if got, ok := l.Target(t); !ok || got != t {
			continue // no pair from this unit's language: it stays as written
		}
		pc.keys[k] = &MemoryKey{WorkspaceID: p.job.WorkspaceID, Source: src, Target: t,
			Glossary: p.glossary.Version, Form: p.form, Text: pc.forms[k]}
		sent = true
	}
	if !sent {
		return nil, nil
	}
	return pc, nil
}

// units calls f with every unit of w that is sent: its piece, its index
// in it and its memory key.
func (w *targetWork) units(f func(pc *piece, u int, k MemoryKey)) {
	for _, pc := range w.pieces {
		if pc == nil {
			continue
		}
		for u, k := range pc.keys {
			if k != nil {
				f(pc, u, *k)
			}
		}
	}
}

// fixedFor returns the glossary's fixed renderings for target: a
// translation keyed by the target's tag, else by its primary subtag.
func (p *plan) fixedFor(target string) map[string]string {
	if len(p.glossary.Fixed) == 0 {
		return nil
	}
	base := target
	if t, err := language.Parse(target); err == nil {
		b, _ := t.Base()
		base = b.String()
	}
	out := map[string]string{}
	for _, f := range p.glossary.Fixed {
		if r, ok := lookupFold(f.Translations, target); ok {
			out[f.Term] = r
		} else if r, ok := lookupFold(f.Translations, base); ok {
			out[f.Term] = r
		}
	}
	return out
}

func lookupFold(m map[string]string, key string) (string, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}

// recall asks the memory for every distinct unit to send.
func (p *plan) recall(ctx context.Context) error {
	p.calls = map[MemoryKey]*callResult{}
	var keys []MemoryKey
	for _, w := range p.work {
		w.units(func(_ *piece, _ int, k MemoryKey) {
			if p.calls[k] == nil {
				p.calls[k] = &callResult{}
				keys = append(keys, k)
			}
		})
	}
	if p.svc.Memory == nil || len(keys) == 0 {
		return nil
	}
	got, err := p.svc.Memory.Recall(ctx, keys)
	if err != nil {
		// The memory only saves calls: without it, everything is sent.
		p.svc.log().WarnContext(ctx, "translation: memory unavailable; sending every unit", "message_id", p.job.MessageID, "error", err.Error())
		return nil
	}
	for k, text := range got {
		if c := p.calls[k]; c != nil {
			c.text, c.remembered, c.done = text, true, true
		}
	}
	return nil
}

// chars is what will be sent: the characters of every unit not
// remembered, once per distinct unit and pair.
func (p *plan) chars() int64 {
	var n int64
	for k, c := range p.calls {
		if !c.remembered {
			n += int64(utf8.RuneCountInString(k.Text))
		}
	}
	return n
}

// call sends every unit not remembered, at most Concurrency at a time,
// starting none after the stop time (those fail with ErrUnfinished).
func (p *plan) call(ctx context.Context) {
	stop := p.svc.stopTime(ctx)
	var keys []MemoryKey
	for k, c := range p.calls {
		if !c.remembered {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		return a.Text < b.Text
	})
	sem := make(chan struct{}, p.svc.concurrency())
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, k := range keys {
		sem <- struct{}{}
		if !stop.IsZero() && !time.Now().Before(stop) {
			<-sem
			mu.Lock()
			p.calls[k].err = ErrUnfinished
			mu.Unlock()
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			start := time.Now()
			res, err := p.svc.Translator.Translate(ctx, k.Text, k.Source, k.Target)
			if o := p.svc.Observer; o != nil {
				o.Translated(ctx, k.Target, utf8.RuneCountInString(k.Text), time.Since(start), err)
			}
			mu.Lock()
			c := p.calls[k]
			c.text, c.err, c.done = res.Text, err, err == nil
			mu.Unlock()
		})
	}
	wg.Wait()
}

// remember stores every answer that restores in the memory.
func (p *plan) remember(ctx context.Context) {
	if p.svc.Memory == nil {
		return
	}
	entries := map[MemoryKey]string{}
	for _, w := range p.work {
		w.units(func(pc *piece, u int, k MemoryKey) {
			if c := p.calls[k]; c.done && !c.remembered && pc.doc.RestoresUnit(u, c.text) {
				entries[k] = c.text
			}
		})
	}
	if len(entries) == 0 {
		return
	}
	if err := p.svc.Memory.Remember(ctx, entries); err != nil {
		p.svc.log().WarnContext(ctx, "translation: memory not written", "message_id", p.job.MessageID, "units", len(entries), "error", err.Error())
	}
}

// assemble restores each target's translation from its units' answers:
// its content and its alt texts. A text not translated is the original
// (an alt text "", which readers read as the attachment's own).
func (p *plan) assemble(ctx context.Context) []chat.Translation {
	now := p.svc.now()
	var saves []chat.Translation
	for _, w := range p.work {
		out := make([]string, len(p.texts))
		var failed error
		for i, pc := range w.pieces {
			if pc == nil {
				continue
			}
			text, err := p.restore(ctx, w.target, i, pc)
			if err != nil {
				failed = err
				break
			}
			if text != p.texts[i] {
				out[i] = text
			}
		}
		if failed != nil {
			p.failed.Languages = append(p.failed.Languages, w.target)
			p.failed.Errs = append(p.failed.Errs, failed)
			continue
		}
		if !anyText(out) {
			continue // nothing changed: readers read the original, translated false
		}
		tr := chat.Translation{MessageID: p.job.MessageID, Language: w.target, Content: out[0],
			SourceLanguage: p.language, CreatedAt: now}
		if tr.Content == "" {
			tr.Content = p.job.Content
		}
		if anyText(out[1:]) {
			tr.AltTexts = out[1:]
		}
		// The bound is on the item's text, the content and alt texts together.
		if n := len(tr.Content) + textBytes(tr.AltTexts); n > MaxTranslationBytes {
			p.svc.log().WarnContext(ctx, "translation: answer too long to store; storing the original text",
				"message_id", p.job.MessageID, "target", w.target, "bytes", n, "max_bytes", MaxTranslationBytes)
			tr.Content, tr.AltTexts, tr.Untranslated = p.job.Content, nil, UntranslatedTooLong
		}
		saves = append(saves, tr)
	}
	return saves
}

// restore restores text i's translation into target from its units'
// answers: a unit whose spans do not come back is left as written, and the
// text is the original when it does not restore. Its error is that of a
// unit whose call failed (the target is then retried).
func (p *plan) restore(ctx context.Context, target string, i int, pc *piece) (string, error) {
	texts := make([]string, len(pc.forms))
	for u, k := range pc.keys {
		texts[u] = pc.forms[u] // as it is
		if k == nil {
			continue
		}
		c := p.calls[*k]
		switch {
		case c.err != nil && errors.Is(c.err, ErrUnsupported):
			p.svc.log().InfoContext(ctx, "translation: unit left untranslated", "message_id", p.job.MessageID,
				"target", target, "reason", c.err.Error())
		case c.err != nil:
			return "", c.err
		case pc.doc.RestoresUnit(u, c.text):
			texts[u] = c.text
		default:
			p.svc.log().WarnContext(ctx, "translation: a protected span did not come back; the unit is shown as written",
				"message_id", p.job.MessageID, "target", target, "text", i, "unit", u+1)
		}
	}
	text, err := pc.doc.RestorePlaceholders(texts)
	if err != nil {
		p.svc.log().WarnContext(ctx, "translation: not restored; readers read the original", "message_id", p.job.MessageID,
			"target", target, "text", i, "error", err.Error())
		return p.texts[i], nil
	}
	return text, nil
}

// anyText reports whether some text of texts is not "".
func anyText(texts []string) bool {
	return slices.ContainsFunc(texts, func(t string) bool { return t != "" })
}

// textBytes is the length of texts together, in bytes.
func textBytes(texts []string) int {
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	return n
}

// finish clears the marker of a message that needs no translation, without
// reading it: one write, which is a no-op for a message without a marker.
func (s *Service) finish(ctx context.Context, job messages.Job) error {
	if err := s.save(ctx, job, nil, true); err != nil {
		return fmt.Errorf("translation: finish message %s: %w", job.MessageID, err)
	}
	return nil
}

// save stores ts of job's revision: through RevisionSaver when the store
// is one, so that nothing lands on a newer revision.
func (s *Service) save(ctx context.Context, job messages.Job, ts []chat.Translation, finished bool) error {
	for i := range ts {
		ts[i].Revision = job.Rev()
	}
	if rs, ok := s.Store.(RevisionSaver); ok {
		return rs.SaveRevision(ctx, job.ChannelID, job.MessageID, job.Rev(), ts, finished)
	}
	return s.Store.SaveTranslations(ctx, job.ChannelID, job.MessageID, ts, finished)
}
