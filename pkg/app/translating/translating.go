// Package translating wires the translation function from its
// environment: which translator (TRANSLATOR), where Apertium is
// (APERTIUM_URL), and how many calls a message may have in flight. It is
// apart from package app so that only the functions that translate link the
// Amazon Translate client and its initialisation.
package translating

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/translate"
	"github.com/chatbridge/chat/pkg/amazontranslate"
	"github.com/chatbridge/chat/pkg/apertium"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/dynamo/glossarystore"
	"github.com/chatbridge/chat/pkg/dynamo/translationstore"
	"github.com/chatbridge/chat/pkg/glossary"
	"github.com/chatbridge/chat/pkg/queueapi"
	"github.com/chatbridge/chat/pkg/translation"
	"github.com/chatbridge/chat/pkg/whatlang"
)

// Environment of the translation function.
const (
	// EnvTranslator chooses the translator: amazon, apertium or none
	// (the default, which delivers every message as it was posted).
	EnvTranslator = "TRANSLATOR"
	// EnvApertiumURL is the APY server's base URL, required by apertium.
	EnvApertiumURL = "APERTIUM_URL"
	// EnvTranslateConcurrency bounds the translator calls one message has
	// in flight (default translation.DefaultConcurrency).
	EnvTranslateConcurrency = "TRANSLATE_CONCURRENCY"
)

// Translator names accepted in EnvTranslator.
const (
	TranslatorAmazon   = "amazon"
	TranslatorApertium = "apertium"
	TranslatorNone     = "none"
)

// maxTranslateConcurrency caps EnvTranslateConcurrency: more calls at once
// only meet the translator's throttling sooner.
const maxTranslateConcurrency = 64

// Translator returns the translator EnvTranslator names, and its name.
// Errors name the variable that is wrong.
func Translator(a *app.App) (translation.Translator, string, error) {
	name := awsenv.Get(EnvTranslator, TranslatorNone)
	switch name {
	case TranslatorNone:
		return translation.None, name, nil
	case TranslatorAmazon:
		return amazontranslate.New(translate.NewFromConfig(a.AWS, amazontranslate.ReadOnlyBodies)), name, nil
	case TranslatorApertium:
		url := awsenv.Get(EnvApertiumURL, "")
		if url == "" {
			return nil, "", fmt.Errorf("%s=%s needs %s (the APY server's URL, such as http://127.0.0.1:2737)", EnvTranslator, name, EnvApertiumURL)
		}
		c, err := apertium.New(url, nil)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", EnvApertiumURL, err)
		}
		return c, name, nil
	}
	return nil, "", fmt.Errorf("%s: %q is not one of %s, %s, %s", EnvTranslator, name, TranslatorAmazon, TranslatorApertium, TranslatorNone)
}

// Service returns the service that translates accepted
// messages, with the configured translator and concurrency.
func Service(a *app.App) (*translation.Service, string, error) {
	tr, name, err := Translator(a)
	if err != nil {
		return nil, "", err
	}
	n := translation.DefaultConcurrency
	if v := awsenv.Get(EnvTranslateConcurrency, ""); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > maxTranslateConcurrency {
			return nil, "", fmt.Errorf("%s: %q is not a whole number from 1 to %d", EnvTranslateConcurrency, v, maxTranslateConcurrency)
		}
	}
	st := translationstore.New(a.DB, a.Table)
	svc := &translation.Service{Store: st, Translator: tr, Concurrency: n, Now: a.Now,
		Budget: &translation.Budget{Store: st}, Memory: st,
		Lexicon: &translation.CachedLexicon{Store: vocabulary{st, glossarystore.New(a.DB, a.Table)}, Now: a.Now}}
	if name != TranslatorNone {
		svc.Detector = whatlang.Detector{}
	}
	if a.Metrics != nil {
		svc.Observer = metrics{a.Metrics}
		svc.Budget.Exceeded = metrics{a.Metrics}.budgetExceeded
	}
	return svc, name, nil
}

// vocabulary is the translation.VocabularyStore of the table: names from
// the translation store, the glossary from the glossary store.
type vocabulary struct {
	*translationstore.Store
	glossaries glossaryReader
}

type glossaryReader interface {
	Version(ctx context.Context, ws string) (string, error)
	Glossary(ctx context.Context, ws string) (glossary.Glossary, error)
}

func (v vocabulary) GlossaryVersion(ctx context.Context, ws string) (string, error) {
	return v.glossaries.Version(ctx, ws)
}

func (v vocabulary) Glossary(ctx context.Context, ws string) (glossary.Glossary, error) {
	return v.glossaries.Glossary(ctx, ws)
}

// Function is the translation function's logical id.
const Function = "TranslateFunction"

// FromEnv builds the translation function's Lambda handler from its
// environment (TABLE_NAME and the translator's variables), its metrics on
// stdout.
func FromEnv(ctx context.Context) (queueapi.SQSHandler, error) {
	a, _, err := app.FromEnv(ctx)
	if err != nil {
		return nil, err
	}
	a.Metrics = app.LambdaMetrics(Function)
	return Handler(ctx, a)
}

// Handler serves TranslateFunction: the translation queue's
// batches, with partial batch failures.
func Handler(ctx context.Context, a *app.App) (queueapi.SQSHandler, error) {
	svc, name, err := Service(a)
	if err != nil {
		return nil, err
	}
	slog.InfoContext(ctx, "translation function ready", "translator", name, "concurrency", svc.Concurrency)
	return queueapi.NewTranslateHandler(svc), nil
}

// BudgetExceededMetric counts the messages that the daily translation
// budget left untranslated; template.yaml's TranslationBudgetExceededAlarm
// watches it.
const BudgetExceededMetric = "TranslationBudgetExceeded"

// budgetExceeded records one message left untranslated by the budget. The
// workspace is in the log line, not a dimension: one metric, one alarm.
func (m metrics) budgetExceeded(ctx context.Context, _ string, chars int64) {
	m.rec.Record(ctx,
		awsenv.Metric{Name: BudgetExceededMetric, Unit: awsenv.UnitCount, Value: 1},
		awsenv.Metric{Name: "UntranslatedCharacters", Unit: awsenv.UnitCount, Value: float64(chars)})
}

// metrics records translator calls as CloudWatch metrics.
type metrics struct{ rec awsenv.MetricRecorder }

func (m metrics) Translated(ctx context.Context, _ string, chars int, took time.Duration, err error) {
	failed := 0.0
	if err != nil {
		failed = 1
	}
	m.rec.Record(ctx,
		awsenv.Metric{Name: "TranslationCalls", Unit: awsenv.UnitCount, Value: 1},
		awsenv.Metric{Name: "TranslatedCharacters", Unit: awsenv.UnitCount, Value: float64(chars)},
		awsenv.Metric{Name: "TranslationLatency", Unit: awsenv.UnitMilliseconds, Value: float64(took.Microseconds()) / 1000},
		awsenv.Metric{Name: "TranslationErrors", Unit: awsenv.UnitCount, Value: failed})
}
