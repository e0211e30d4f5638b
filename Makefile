# Build, run and test the chat service's Lambda bundle.
#
#   make run     the whole service locally on 127.0.0.1:3000, with demo data
#   make test    vet, cfn-lint, the OpenAPI linters, unit, integration (moto, Apertium) and wiring tests
#   make bench   benchmarks of the hot paths
#   make load    load scenarios against a local stack with AWS's throughput limits divided by K (default 10)
#   make build   every function's arm64 bootstrap under build/<LogicalId>/
#   make template  rewrite template.yaml's generated per-function alarms and log groups
#
# SAM builds each function through its build-<LogicalId> target
# (Metadata: BuildMethod: makefile), with ARTIFACTS_DIR set.

SHELL        := /bin/bash
GO           ?= go
LAMBDA_ENV   := GOOS=linux GOARCH=arm64 CGO_ENABLED=0
LAMBDA_FLAGS := -tags lambda.norpc -trimpath -ldflags="-s -w"
FUZZTIME     ?= 20s
# OPENAPI_LINT is where scripts/ensure-test-tools installed the OpenAPI
# linters (evaluated only by lint).
OPENAPI_LINT = $(shell scripts/openapi-lint-dir)/node_modules/.bin

# LogicalId:directory under functions/, one per function in template.yaml.
FUNCTIONS := \
	JoinRoomFunction:join-room \
	ListGuestMessagesFunction:list-guest-messages \
	ListGuestRepliesFunction:list-guest-replies \
	PostGuestMessageFunction:post-guest-message \
	ListOutboundWebhooksFunction:list-outbound-webhooks \
	ListSupportWebhooksFunction:list-support-webhooks \
	InboundWebhookFunction:inbound-webhook \
	EditWebhookMessageFunction:edit-webhook-message \
	DeleteWebhookMessageFunction:delete-webhook-message \
	ListInboundRequestsFunction:list-inbound-requests \
	ListChannelsFunction:list-channels \
	ListChannelMessagesFunction:list-channel-messages \
	ListChannelRepliesFunction:list-channel-replies \
	PostChannelMessageFunction:post-channel-message \
	CreateChannelUploadFunction:create-channel-upload \
	CreateGuestUploadFunction:create-guest-upload \
	CreateWebhookUploadFunction:create-webhook-upload \
	EditChannelMessageFunction:edit-channel-message \
	DeleteChannelMessageFunction:delete-channel-message \
	EditGuestMessageFunction:edit-guest-message \
	DeleteGuestMessageFunction:delete-guest-message \
	AddChannelReactionFunction:add-channel-reaction \
	RemoveChannelReactionFunction:remove-channel-reaction \
	AddGuestReactionFunction:add-guest-reaction \
	RemoveGuestReactionFunction:remove-guest-reaction \
	CreateRoomFunction:create-room \
	ListRoomsFunction:list-rooms \
	CloseRoomFunction:close-room \
	ListInboundWebhooksFunction:list-inbound-webhooks \
	CreateInboundWebhookFunction:create-inbound-webhook \
	UpdateInboundWebhookFunction:update-inbound-webhook \
	DeleteInboundWebhookFunction:delete-inbound-webhook \
	RotateInboundWebhookSecretFunction:rotate-inbound-webhook-secret \
	CreateOutboundWebhookFunction:create-outbound-webhook \
	UpdateOutboundWebhookFunction:update-outbound-webhook \
	DeleteOutboundWebhookFunction:delete-outbound-webhook \
	RotateOutboundWebhookSecretFunction:rotate-outbound-webhook-secret \
	CreateSupportWebhookFunction:create-support-webhook \
	UpdateSupportWebhookFunction:update-support-webhook \
	DeleteSupportWebhookFunction:delete-support-webhook \
	RotateSupportWebhookSecretFunction:rotate-support-webhook-secret \
	ListAuditEventsFunction:list-audit-events \
	GetGlossaryFunction:get-glossary \
	PutGlossaryFunction:put-glossary \
	OutboxRelayFunction:outbox-relay \
	TranslateFunction:translate \
	TranslationSweepFunction:translation-sweep \
	DeliverWebhooksFunction:deliver-webhooks \
	ListOutboundDeliveriesFunction:list-outbound-deliveries \
	ListSupportDeliveriesFunction:list-support-deliveries \
	RedeliverOutboundFunction:redeliver-outbound \
	RedeliverSupportFunction:redeliver-support \
	TestOutboundWebhookFunction:test-outbound-webhook \
	TestSupportWebhookFunction:test-support-webhook \
	RecoverOutboundDeliveriesFunction:recover-outbound-deliveries \
	RecoverSupportDeliveriesFunction:recover-support-deliveries \
	RealtimeFunction:realtime \
	RealtimePushFunction:realtime-push \
	RealtimeFanoutFunction:realtime-fanout \
	GuestPageFunction:guest-page \
	FallbackFunction:fallback

# dir_of is the functions/ directory of LogicalId $(1), from FUNCTIONS.
dir_of = $(patsubst $(1):%,%,$(filter $(1):%,$(FUNCTIONS)))

.PHONY: load build run test test-suite test-payload test-tools lint vet bench fuzz clean chatctl template

# build-<LogicalId>: one pattern rule for every function. SAM's makefile
# builder runs `make build-<LogicalId>` with ARTIFACTS_DIR set and reads no
# target list, so adding a function only needs its FUNCTIONS entry. (These
# targets must not be .PHONY: make skips implicit rules for phony targets.)
build-%:
	$(if $(call dir_of,$*),,$(error $@: $* is not in FUNCTIONS))
	$(if $(ARTIFACTS_DIR),,$(error $@: ARTIFACTS_DIR is not set))
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(call dir_of,$*)

build:
	@set -e; for f in $(FUNCTIONS); do \
		id=$${f%%:*}; \
		$(MAKE) --no-print-directory build-$$id ARTIFACTS_DIR=build/$$id; \
	done

# template rewrites template.yaml's generated block (each function's Errors
# alarm and log group) after a function is added or removed.
template:
	$(GO) run ./internal/templategen/gen

chatctl:
	$(GO) build -o bin/chatctl ./cmd/chatctl

run: chatctl
	@scripts/ensure-run-tools
	bin/chatctl serve --demo

test-tools:
	@scripts/ensure-test-tools

vet:
	$(GO) vet ./...

# lint also holds openapi.yaml to Redocly CLI's and Spectral's OpenAPI rules,
# warnings included (tools/openapi-lint: the pinned versions, the
# configurations and why each exception is one).
lint: vet
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
		if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	cfn-lint template.yaml
	@test -x $(OPENAPI_LINT)/redocly -a -x $(OPENAPI_LINT)/spectral || { echo "lint: the OpenAPI linters are not installed: run make test-tools"; exit 1; }
	REDOCLY_TELEMETRY=off $(OPENAPI_LINT)/redocly lint --config tools/openapi-lint/redocly.yaml openapi.yaml
	$(OPENAPI_LINT)/spectral lint --fail-severity=warn --ruleset tools/openapi-lint/.spectral.yaml openapi.yaml

# test runs lint, the suite under the race detector and the payload pass
# side by side, each target's output kept together.
test: test-tools
	@$(MAKE) --no-print-directory -j3 --output-sync=target lint test-suite test-payload

# pkg/app takes about 8 minutes under the race detector on a 2-core machine
# (1,000 concurrent reactions to one message among them): past go test's
# default 10-minute timeout on a slower one. 25 minutes is still well inside
# CI's 90.
test-suite:
	$(GO) test -race -count=1 -timeout 25m ./...

# test-payload runs the tests that move megabytes and exercise no
# concurrency (they call racetest.Payload, and skip under -race) without
# the race detector, which would multiply their cost three to five times.
test-payload:
	@args=$$(scripts/payload-tests); if [ -n "$$args" ]; then set -x; $(GO) test -count=1 $$args; fi

# Benchmarks in benchstat's input format, then the table of bootstrap sizes
# and cold inits beside a minimal aws-lambda-go binary.
bench:
	@$(GO) test -run='^$$' -bench=. -benchmem -count=1 $$($(GO) list ./pkg/... ./internal/...) | grep -E '^(goos|goarch|pkg|cpu|Benchmark|ok|FAIL)'
	@PERF_TABLE=1 $(GO) test -count=1 -run='^TestPerformanceTable$$' -v ./e2e | sed 's/^ *//' | sed -n '/^| function/,/^Budgets/p;/FAIL/p' 

# load starts its own local stack (moto_server and chatctl serve on free
# loopback ports, AWS's throughput limits divided by K) and prints a table
# of each scenario (docs/performance.md, "Load runs"). Run by hand; not
# part of make test.
K ?= 10
SCENARIOS ?= a,c,b,d,e
READERS ?= 0
load: chatctl
	@command -v $${MOTO_SERVER:-moto_server} >/dev/null || { echo "make load: moto_server is required: python3 -m pip install 'moto[server]>=5.1'"; exit 1; }
	@mkdir -p build
	bin/chatctl load --throughput $(K) --scenarios $(SCENARIOS) --readers $(READERS) --log build/load.log

fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list='^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run='^$$' -fuzz="^$$target$$" -fuzztime=$(FUZZTIME) $$pkg; \
		done; \
	done

clean:
	rm -rf bin build .aws-sam
