# Build, run and test the chat service's Lambda bundle.
#
#   make run     the whole service locally on 127.0.0.1:3000, with demo data
#   make test    vet, cfn-lint, unit, integration (moto, Apertium) and wiring tests
#   make bench   benchmarks of the hot paths
#   make build   every function's arm64 bootstrap under build/<LogicalId>/
#
# SAM builds each function through its build-<LogicalId> target
# (Metadata: BuildMethod: makefile), with ARTIFACTS_DIR set.

SHELL        := /bin/bash
GO           ?= go
LAMBDA_ENV   := GOOS=linux GOARCH=arm64 CGO_ENABLED=0
LAMBDA_FLAGS := -tags lambda.norpc -trimpath -ldflags="-s -w"
FUZZTIME     ?= 20s

# LogicalId:directory under functions/, one per function in template.yaml.
FUNCTIONS := \
	JoinRoomFunction:join-room \
	ListGuestMessagesFunction:list-guest-messages \
	PostGuestMessageFunction:post-guest-message \
	ListOutboundWebhooksFunction:list-outbound-webhooks \
	ListSupportWebhooksFunction:list-support-webhooks \
	InboundWebhookFunction:inbound-webhook \
	ListInboundRequestsFunction:list-inbound-requests \
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
	OutboxRelayFunction:outbox-relay \
	TranslateFunction:translate \
	FallbackFunction:fallback

define lambda_build
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(1)
endef

.PHONY: build run test test-tools lint vet bench fuzz clean chatctl

build-JoinRoomFunction:
	$(call lambda_build,join-room)

build-ListGuestMessagesFunction:
	$(call lambda_build,list-guest-messages)

build-PostGuestMessageFunction:
	$(call lambda_build,post-guest-message)

build-ListOutboundWebhooksFunction:
	$(call lambda_build,list-outbound-webhooks)

build-ListSupportWebhooksFunction:
	$(call lambda_build,list-support-webhooks)

build-InboundWebhookFunction:
	$(call lambda_build,inbound-webhook)

build-ListInboundRequestsFunction:
	$(call lambda_build,list-inbound-requests)

build-ListInboundWebhooksFunction:
	$(call lambda_build,list-inbound-webhooks)

build-CreateInboundWebhookFunction:
	$(call lambda_build,create-inbound-webhook)

build-UpdateInboundWebhookFunction:
	$(call lambda_build,update-inbound-webhook)

build-DeleteInboundWebhookFunction:
	$(call lambda_build,delete-inbound-webhook)

build-RotateInboundWebhookSecretFunction:
	$(call lambda_build,rotate-inbound-webhook-secret)

build-CreateOutboundWebhookFunction:
	$(call lambda_build,create-outbound-webhook)

build-UpdateOutboundWebhookFunction:
	$(call lambda_build,update-outbound-webhook)

build-DeleteOutboundWebhookFunction:
	$(call lambda_build,delete-outbound-webhook)

build-RotateOutboundWebhookSecretFunction:
	$(call lambda_build,rotate-outbound-webhook-secret)

build-CreateSupportWebhookFunction:
	$(call lambda_build,create-support-webhook)

build-UpdateSupportWebhookFunction:
	$(call lambda_build,update-support-webhook)

build-DeleteSupportWebhookFunction:
	$(call lambda_build,delete-support-webhook)

build-RotateSupportWebhookSecretFunction:
	$(call lambda_build,rotate-support-webhook-secret)

build-ListAuditEventsFunction:
	$(call lambda_build,list-audit-events)

build-OutboxRelayFunction:
	$(call lambda_build,outbox-relay)

build-TranslateFunction:
	$(call lambda_build,translate)

build-FallbackFunction:
	$(call lambda_build,fallback)

build:
	@set -e; for f in $(FUNCTIONS); do \
		id=$${f%%:*}; dir=$${f##*:}; \
		$(MAKE) --no-print-directory build-$$id ARTIFACTS_DIR=build/$$id; \
	done

chatctl:
	$(GO) build -o bin/chatctl ./cmd/chatctl

run: chatctl
	@scripts/ensure-run-tools
	bin/chatctl serve --demo

test-tools:
	@scripts/ensure-test-tools

vet:
	$(GO) vet ./...

lint: vet
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
		if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	cfn-lint template.yaml

test: test-tools lint
	$(GO) test -race -count=1 ./...

# Benchmarks in benchstat's input format, then the table of bootstrap sizes
# and cold inits beside a minimal aws-lambda-go binary.
bench:
	@$(GO) test -run='^$$' -bench=. -benchmem -count=1 $$($(GO) list ./pkg/... ./internal/...) | grep -E '^(goos|goarch|pkg|cpu|Benchmark|ok|FAIL)'
	@PERF_TABLE=1 $(GO) test -count=1 -run='^TestPerformanceTable$$' -v ./e2e | sed 's/^ *//' | sed -n '/^| function/,/^Budgets/p;/FAIL/p' 

fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list='^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run='^$$' -fuzz="^$$target$$" -fuzztime=$(FUZZTIME) $$pkg; \
		done; \
	done

clean:
	rm -rf bin build .aws-sam
