// SPDX-License-Identifier: MIT

package cp

// The SELinux options (-Z, --context, --preserve=context) on a system
// fastcp treats as without SELinux.

import (
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// selinuxChecks does what cp does with -Z, --context and
// --preserve=context on a system without SELinux, which is what fastcp
// is to them: it sets no security context. It reports whether the run
// must stop.
func (a *app) selinuxChecks() bool {
	o := a.opts
	if !o.PreserveContext && !o.SetContext {
		return false
	}
	if selinuxEnabled() {
		// cp would set or copy contexts here; fastcp cannot, and says so.
		if o.PreserveContext {
			a.seq.emit(true, output.NoContextCopy)
			return true
		}
		a.out.Warnf("%s", output.IgnoringContext)
		return false
	}
	if o.PreserveContext {
		a.seq.emit(true, output.NoContextWithoutSELinux)
		return true
	}
	if o.ContextArg {
		a.out.Warnf("%s", output.IgnoringContextWithoutSELinux)
	}
	return false
}

// selinuxEnabled reports whether the kernel runs SELinux (selinuxfs is
// mounted, as libselinux's is_selinux_enabled looks); a variable for the
// unit tests of a system with SELinux.
var selinuxEnabled = func() bool {
	var st unix.Stat_t
	return unix.Stat("/sys/fs/selinux/enforce", &st) == nil
}
