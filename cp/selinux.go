// SPDX-License-Identifier: MIT

package cp

// The SELinux options (-Z, --context, --preserve=context) on a system
// fastcp treats as without SELinux.

import "golang.org/x/sys/unix"

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
			a.seq.emit(true, "cannot preserve security context: fastcp does not copy SELinux contexts")
			return true
		}
		a.out.Warnf("ignoring --context: fastcp does not set SELinux contexts")
		return false
	}
	if o.PreserveContext {
		a.seq.emit(true, "cannot preserve security context without an SELinux-enabled kernel")
		return true
	}
	if o.ContextArg {
		a.out.Warnf("ignoring --context; it requires an SELinux-enabled kernel")
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
