module fastcp

go 1.26.0

require (
	github.com/schollz/progressbar/v3 v3.17.1
	github.com/spf13/pflag v1.1.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	golang.org/x/term v0.26.0 // indirect
)
