module fastcp

go 1.24.0

require (
	github.com/schollz/progressbar/v3 v3.16.0
	github.com/spf13/pflag v1.0.7
	golang.org/x/sys v0.25.0
)

require (
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	golang.org/x/term v0.24.0 // indirect
)
