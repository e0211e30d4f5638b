package translation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

// DefaultConcurrency bounds the translator calls that one message has in
// flight when Service.Concurrency is not set.
const DefaultConcurrency = 4

// Reader is one reader of a channel with its preferred language.
type Reader struct {
	// Kind is chat.AuthorUser or chat.AuthorGuest.
	Kind     string
	ID       string
	Language string
}

// Store is the storage the translation function needs: one read of the
// channel's readers, one read of the message, one save.
type Store interface {
	// Readers returns the readers of channel at now: its member users, and
	// the guests of its Temporary Rooms that are active and unexpired at now.
	Readers(ctx context.Context, channelID string, now time.Time) ([]Reader, error)
	// Message returns what translating the message of channel needs (its
	// content, the target languages it records as translated, whether it
	// holds its untranslated marker), read consistently: a redelivery right
	// after a save sees it. Errors: ENotFound when the message does not
	// exist.
	Message(ctx context.Context, channelID, messageID string) (Stored, error)
	// SaveTranslations stores ts, translations of the message of channel,
	// replacing any stored translation into the same language, and only then
	// records their languages on the message and, when finished, clears its
	// untranslated marker, in one write. With no translations and finished,
	// it only clears the marker. A failure in between leaves a language
	// stored but unrecorded: the next delivery translates it again (a wasted
	// call), never one recorded but missing. A message that no longer exists
	// is not an error.
	SaveTranslations(ctx context.Context, channelID, messageID string, ts []chat.Translation, finished bool) error
}

// Stored is what the store holds of a message to translate.
type Stored struct {
	Content string
	// Done are the target languages recorded as translated.
	Done map[string]bool
	// Marked reports that the message still holds its untranslated marker,
	// which finishing it clears.
	Marked bool
	// Revision is the stored content's revision (1 for a message never
	// edited); a job of an earlier revision has nothing left to do.
	Revision int
}

// RevisionSaver is a Store that conditions a save on the message's
// revision (contract section 13): the translations and the record of
// their languages are written only while the message is still at that
// revision and not deleted, so a translation of an earlier revision never
// lands over a newer one, whatever order the jobs finish in. A refused
// save is not an error. Service uses it when its Store implements it.
type RevisionSaver interface {
	SaveRevision(ctx context.Context, channelID, messageID string, revision int, ts []chat.Translation, finished bool) error
}

// MaxTranslationBytes bounds a stored translation's text (UTF-8 bytes), so
// that its item fits DynamoDB's 400 KB with room for its other attributes.
// A translator's answer past it is stored as the original text, flagged
// UntranslatedTooLong: the readers of that language read the original, as
// they would without a translator, and a redelivery does not ask again.
const MaxTranslationBytes = 380_000

// UntranslatedTooLong is chat.Translation.Untranslated for an answer past
// MaxTranslationBytes.
const UntranslatedTooLong = "too_long"

// Service translates accepted messages for their readers.
type Service struct {
	Store      Store
	Translator Translator
	// Concurrency bounds the translator calls in flight for one message;
	// DefaultConcurrency when zero or negative.
	Concurrency int
	// Now is the clock; time.Now when nil.
	Now chat.Clock
	// Log receives what was skipped and why; slog.Default() when nil.
	Log *slog.Logger
	// Observer, when set, is told of every translator call (for metrics).
	Observer Observer
	// Budget, when set, is charged before the translator is called
	// (budget.go); past it, messages stay untranslated.
	Budget *Budget
}

// Observer is told of every translator call: its target, the characters
// sent, how long it took, and its error.
type Observer interface {
	Translated(ctx context.Context, target string, chars int, took time.Duration, err error)
}

// FailedError reports the target languages of one message whose
// translation failed. Every other translation was stored, so processing the
// message again redoes only these.
type FailedError struct {
	MessageID string
	// Languages are the failed targets, sorted; Errs[i] is why Languages[i]
	// failed.
	Languages []string
	Errs      []error
}

func (e *FailedError) Error() string {
	parts := make([]string, len(e.Languages))
	for i, l := range e.Languages {
		parts[i] = fmt.Sprintf("%s (%v)", l, e.Errs[i])
	}
	return fmt.Sprintf("translation: message %s: %d language(s) failed: %s", e.MessageID, len(e.Languages), strings.Join(parts, "; "))
}

// Unwrap returns the causes, so that errors.Is and errors.As see each one.
func (e *FailedError) Unwrap() []error { return e.Errs }

// Process translates job's message into every target language its channel's
// readers need that is not stored yet, and stores the translations. The job
// carries ids; the message's content comes with the one read that says
// what is already translated, and only when some target needs it.
//
// A message is finished when no translation failed: its untranslated marker
// is then cleared in the write that records its languages, so the sweep
// never queues it again. A message that needs no translation costs that
// one write and no read.
//
// No translator is called for a skip_translation message, for a channel
// whose readers all read the source language or a language the translator
// lacks, or for targets already stored (a redelivered job). The readers are
// not read when the translator supports nothing from the source.
//
// For a translator that detects, a target equal to the detected language is
// left untranslated (its readers read the original); and when detection
// contradicts the job's source language, the readers of that language get a
// translation too.
//
// Errors: a *FailedError when some translations failed (the others are
// stored first); the store's or translator's error, wrapped, when nothing
// could be done.
func (s *Service) Process(ctx context.Context, job messages.Job) error {
	if job.SkipTranslation {
		// Its writer marked nothing: there is nothing to finish.
		return nil
	}
	langs, err := s.Translator.Targets(ctx, job.SourceLanguage)
	if err != nil {
		return fmt.Errorf("translation: targets from %q for message %s: %w", job.SourceLanguage, job.MessageID, err)
	}
	if langs.Len() == 0 {
		return s.finish(ctx, job)
	}
	readers, err := s.Store.Readers(ctx, job.ChannelID, s.now())
	if err != nil {
		return fmt.Errorf("translation: readers of channel %s: %w", job.ChannelID, err)
	}
	wanted := readerTargets(langs, readers)
	source, _ := langs.Target(job.SourceLanguage)
	sourceWanted := source != "" && wanted[source]
	delete(wanted, source)
	if len(wanted) == 0 {
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
	done := stored.Done
	todo := make([]string, 0, len(wanted))
	for t := range wanted {
		if !done[t] {
			todo = append(todo, t)
		}
	}
	sort.Strings(todo)
	if job.Content == "" {
		todo = nil
	}
	ok, err := s.Budget.Charge(ctx, job, len(todo), s.now())
	if err != nil {
		return err
	}
	if !ok {
		// The budget is spent: the message is delivered untranslated and
		// is finished, so the sweep does not queue it again.
		return s.finish(ctx, job)
	}

	r := round{svc: s, job: job, langs: langs, source: source}
	r.run(ctx, todo)
	// Detection said the job's source language was wrong: its readers need a
	// translation as well. One more call, only in that case.
	if r.hintWrong && sourceWanted && !done[source] && r.charge(ctx, source) {
		r.run(ctx, []string{source})
	}
	finished := len(r.failed.Languages) == 0
	if len(r.saves) > 0 || finished && stored.Marked {
		if err := s.save(ctx, job, r.saves, finished); err != nil {
			return fmt.Errorf("translation: save %d translation(s) of message %s: %w", len(r.saves), job.MessageID, err)
		}
	}
	if !finished {
		r.failed.MessageID = job.MessageID
		return &r.failed
	}
	return nil
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

// readerTargets returns the distinct targets that serve readers. Each
// distinct language tag is matched once, however many readers share it.
func readerTargets(langs *Languages, readers []Reader) map[string]bool {
	seen := make(map[string]bool)
	wanted := make(map[string]bool)
	for _, rd := range readers {
		if seen[rd.Language] {
			continue
		}
		seen[rd.Language] = true
		if t, ok := langs.Target(rd.Language); ok {
			wanted[t] = true
		}
	}
	return wanted
}

// round collects the outcome of translating one message.
type round struct {
	svc       *Service
	job       messages.Job
	langs     *Languages
	source    string
	saves     []chat.Translation
	failed    FailedError
	hintWrong bool
}

type outcome struct {
	target string
	res    Result
	err    error
}

// run translates the message into targets, at most Concurrency at a time,
// and sorts each outcome into saves, failures or skips.
func (r *round) run(ctx context.Context, targets []string) {
	outs := make([]outcome, len(targets))
	sem := make(chan struct{}, r.svc.concurrency())
	var wg sync.WaitGroup
	for i, t := range targets {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			start := time.Now()
			res, err := r.svc.Translator.Translate(ctx, r.job.Content, r.job.SourceLanguage, t)
			if o := r.svc.Observer; o != nil {
				o.Translated(ctx, t, utf8.RuneCountInString(r.job.Content), time.Since(start), err)
			}
			outs[i] = outcome{target: t, res: res, err: err}
		})
	}
	wg.Wait()

	now := r.svc.now()
	for _, o := range outs {
		switch {
		case errors.Is(o.err, ErrUnsupported):
			r.svc.log().InfoContext(ctx, "translation: target left untranslated", "message_id", r.job.MessageID,
				"target", o.target, "reason", o.err.Error())
		case o.err != nil:
			r.failed.Languages = append(r.failed.Languages, o.target)
			r.failed.Errs = append(r.failed.Errs, o.err)
		default:
			src := r.job.SourceLanguage
			if d := o.res.SourceLanguage; d != "" {
				src = d
				dt, ok := r.langs.Target(d)
				if ok && dt == o.target {
					// Already in the readers' language: they read the original.
					continue
				}
				if r.source != "" && dt != r.source {
					r.hintWrong = true
				}
			}
			tr := chat.Translation{
				MessageID: r.job.MessageID, Language: o.target, Content: o.res.Text,
				SourceLanguage: src, CreatedAt: now,
			}
			if len(tr.Content) > MaxTranslationBytes {
				r.svc.log().WarnContext(ctx, "translation: answer too long to store; storing the original text",
					"message_id", r.job.MessageID, "target", o.target, "bytes", len(tr.Content), "max_bytes", MaxTranslationBytes)
				tr.Content, tr.SourceLanguage, tr.Untranslated = r.job.Content, r.job.SourceLanguage, UntranslatedTooLong
			}
			r.saves = append(r.saves, tr)
		}
	}
}

func (s *Service) concurrency() int {
	if s.Concurrency > 0 {
		return s.Concurrency
	}
	return DefaultConcurrency
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
