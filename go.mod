module fastcp

go 1.24.0

require (
	github.com/spf13/pflag v1.0.7
	golang.org/x/sys v0.14.0
)
