package durability

import (
	"os"
)

// Replace puts a new directory entry at path atomically: create makes it
// under a temporary name in path's directory (a symbolic link, a FIFO, a
// device node, a hard link), then it is renamed over path, so an existing
// entry is replaced in one step and never missing. On failure nothing is
// left behind.
func Replace(path string, create func(tmp string) error) error {
	tmp, err := createTemp(path, create)
	if err != nil {
		return err
	}
	reg.Lock()
	err = os.Rename(tmp, path)
	if err != nil {
		os.Remove(tmp)
	}
	delete(reg.temps, tmp)
	reg.Unlock()
	if err != nil {
		return &Error{Op: "rename", Err: err}
	}
	return nil
}
