# fastcp — build, test, benchmark, install.
# Packagers: make && make install DESTDIR=... PREFIX=/usr

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
DESTDIR ?=
GO      ?= go
INSTALL ?= install
# Tarball builds (no .git): make VERSION=1.0
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
# Where build puts the binary: make build OUT=/tmp/fastcp
OUT     ?= fastcp

# Reproducible: no paths, no build id, no VCS stamp, no cgo; SOURCE_DATE_EPOCH
# is honoured by everything that records a time (nothing in the binary does;
# the installed man page's date is SOURCE_DATE_EPOCH's when it is set).
export CGO_ENABLED = 0
GOBUILD = $(GO) build -trimpath -buildvcs=false -ldflags '-s -w -buildid= -X main.version=$(VERSION)'

# The sources of the binary, so that "make && sudo make install" does not
# need Go (or its cache) as root: install rebuilds only when one changed.
GOSOURCES := $(shell find . -name '*.go' ! -name '*_test.go' ! -path './integration_test/*' 2>/dev/null) go.mod go.sum

.PHONY: all build test lint bench install uninstall clean

all: build

build:
	$(GOBUILD) -o $(OUT) .

$(OUT): $(GOSOURCES)
	$(GOBUILD) -o $(OUT) .

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Unit tests with the race detector, then the integration tests against the
# built binary (root-only cases run as root; under CI=true they must not skip).
test: lint
	CGO_ENABLED=1 $(GO) test -race -count=1 . ./cp/ ./output/ ./copier/ ./flags/ ./durability/ ./benchmark/
	$(GO) test -count=1 -timeout 20m ./integration_test/
	cd integration_test/crashfs && $(GO) vet . && $(GO) test -count=1 -timeout 10m

# fastcp against cp, dd and io.Copy (peerbench), then the durability modes
# against cp && sync, dd conv=fdatasync and fio (durabench): medians, ratios,
# targets met or missed. Needs root (loop mounts); takes about 12 minutes.
bench: build
	$(GO) run ./integration_test/peerbench
	$(GO) run ./integration_test/durabench

# The man page gets the version in its footer and, with SOURCE_DATE_EPOCH,
# that date; everything else is installed as it is.
install: $(OUT)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	$(INSTALL) -m755 $(OUT) $(DESTDIR)$(BINDIR)/fastcp
	tmp=$$(mktemp) && \
	sed -e '/^\.TH /s|"fastcp"|"fastcp $(VERSION)"|' \
		$(if $(SOURCE_DATE_EPOCH),-e "/^\.TH /s| [0-9]*-[0-9]*-[0-9]* | $$(date -u -d @$(SOURCE_DATE_EPOCH) +%F 2>/dev/null || date -u -r $(SOURCE_DATE_EPOCH) +%F) |") \
		man/fastcp.1 >$$tmp && \
	$(INSTALL) -m644 $$tmp $(DESTDIR)$(MANDIR)/man1/fastcp.1; \
	rc=$$?; rm -f $$tmp; exit $$rc
	$(INSTALL) -m644 completions/fastcp.bash $(DESTDIR)$(BASHCOMPDIR)/fastcp
	$(INSTALL) -m644 completions/_fastcp $(DESTDIR)$(ZSHCOMPDIR)/_fastcp
	$(INSTALL) -m644 completions/fastcp.fish $(DESTDIR)$(FISHCOMPDIR)/fastcp.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/fastcp \
		$(DESTDIR)$(MANDIR)/man1/fastcp.1 \
		$(DESTDIR)$(BASHCOMPDIR)/fastcp \
		$(DESTDIR)$(ZSHCOMPDIR)/_fastcp \
		$(DESTDIR)$(FISHCOMPDIR)/fastcp.fish

clean:
	rm -f $(OUT)
