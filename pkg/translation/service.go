package translation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
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
	// AltTexts are the alt texts of the message's attachments, in their
	// order ("" for an attachment without one); nil without attachments.
	AltTexts []string
	// Done are the target languages recorded as translated.
	Done map[string]bool
	// Marked reports that the message still holds its untranslated marker,
	// which finishing it clears.
	Marked bool
	// Revision is the stored content's revision (1 for a message never
	// edited); a job of an earlier revision has nothing left to do.
	Revision int
	// AuthorName is the display name of the message's author, never
	// translated in it.
	AuthorName string
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

// MaxTranslationBytes bounds a stored translation's text, its content and
// alt texts together (UTF-8 bytes), so that its item fits DynamoDB's 400 KB
// with room for its other attributes.
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
	// Detector, when set, finds the language of each message and of each
	// of its sentences long enough to judge (plan.go); else every message
	// is in its job's SourceLanguage.
	Detector Detector
	// Lexicon, when set, gives each workspace's names and glossary, which
	// are never sent to a translator.
	Lexicon Lexicon
	// Memory, when set, remembers each translated unit per workspace and
	// language pair, so that a unit already translated is not sent again.
	Memory Memory
	// Reserve is the time kept before the context's deadline (a Lambda
	// function's): no translator call starts after it, so that what was
	// translated is remembered and saved in time, and the retry goes on
	// from there (ErrUnfinished). DefaultReserve when zero.
	Reserve time.Duration
}

// DefaultReserve leaves a 30-second function 5 seconds to remember and
// save what it translated.
const DefaultReserve = 5 * time.Second

// ErrUnfinished is why a target failed when the deadline came before its
// units were sent: the message's retry sends only what the memory does not
// hold (the units translated before), and is not charged again.
var ErrUnfinished = errors.New("translation: stopped before the deadline; the retry goes on")

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

// stopTime is when no translator call may start: Reserve before ctx's
// deadline; zero without one.
func (s *Service) stopTime(ctx context.Context) time.Time {
	deadline, ok := ctx.Deadline()
	if !ok {
		return time.Time{}
	}
	reserve := s.Reserve
	if reserve <= 0 {
		reserve = DefaultReserve
	}
	return deadline.Add(-reserve)
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
