package durability

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// tempHexLen is the number of hex digits that end a temporary file's name.
const tempHexLen = 12

// tempName returns a candidate name for a temporary file beside path:
// TempPrefix, path's base name (cut to maxTempBase bytes, within NAME_MAX),
// a dot and 12 random hex digits. The digits only need to make a collision
// unlikely (O_EXCL makes one harmless), so math/rand/v2 is enough:
// crypto/rand's first use starts a timer and with it the runtime poller
// (epoll, an eventfd, a thread), a cost paid by every run.
func tempName(path string) string {
	dir, base := filepath.Split(path)
	if len(base) > maxTempBase {
		base = base[:maxTempBase]
	}
	return filepath.Join(dir, fmt.Sprintf("%s%s.%0*x", TempPrefix, base, tempHexLen, rand.Uint64()&(1<<(4*tempHexLen)-1)))
}

// IsTempFor reports whether name (a base name) is one that tempName makes
// for a DEST whose base name is base.
func IsTempFor(name, base string) bool {
	if len(base) > maxTempBase {
		base = base[:maxTempBase]
	}
	rest, ok := strings.CutPrefix(name, TempPrefix+base+".")
	if !ok || len(rest) != tempHexLen {
		return false
	}
	for _, c := range rest {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// createTemp makes a new entry under a fresh temporary name beside path
// with create (which must fail with os.ErrExist when the name is taken),
// and registers it for removal on a fatal signal. Both happen under the
// registry lock, so a signal cannot leave the entry behind between them.
func createTemp(path string, create func(tmp string) error) (string, error) {
	for {
		tmp := tempName(path)
		reg.Lock()
		err := create(tmp)
		if err == nil {
			if reg.temps == nil {
				reg.temps = make(map[string]struct{})
			}
			reg.temps[tmp] = struct{}{}
		}
		reg.Unlock()
		if errors.Is(err, os.ErrExist) {
			continue
		}
		return tmp, err
	}
}
