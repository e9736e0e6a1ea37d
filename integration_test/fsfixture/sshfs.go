// SPDX-License-Identifier: MIT

package fsfixture

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SSHFS is a real network mount: a directory served by an sshd of its own,
// bound to 127.0.0.1 on a free port with keys made for it, and mounted with
// sshfs over ssh, as an administrator mounts a NAS or a remote host. Every
// metadata call on Dir is a round trip through ssh and the SFTP server.
type SSHFS struct {
	Dir    string // the mount point: where a copy onto the mount goes
	Remote string // the directory Dir shows, as the server sees it (a local path)

	work      string // keys, configuration, logs
	sshd      *exec.Cmd
	sshdDone  chan struct{} // closed once sshd has been waited for
	port      int
	sshfs     *exec.Cmd
	sshfsDone chan struct{}
	logs      *bytes.Buffer // sshd's and sshfs's stderr, for errors

	mu sync.Mutex // guards logs
}

// SSHFSPrograms are the programs MountSSHFS runs, and the Debian packages
// that install them.
var SSHFSPrograms = [][2]string{{"sshd", "openssh-server"}, {"ssh", "openssh-client"}, {"ssh-keygen", "openssh-client"}, {"sshfs", "sshfs"}}

// SSHFSMissing says which program an sshfs mount needs is not installed
// (empty: all are), or why one cannot be made here (not root, no
// /dev/fuse).
func SSHFSMissing() string {
	if !IsRoot() {
		return "an sshfs mount needs root (the test's own sshd)"
	}
	for _, p := range SSHFSPrograms {
		if _, err := lookPath(p[0]); err != nil {
			return fmt.Sprintf("%s is not installed (%s)", p[0], p[1])
		}
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return "an sshfs mount needs /dev/fuse"
	}
	return ""
}

// lookPath finds a program in PATH or, for sshd, in the sbin directories a
// user's PATH may lack.
func lookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin"} {
		if fi, serr := os.Stat(filepath.Join(d, name)); serr == nil && fi.Mode().IsRegular() {
			return filepath.Join(d, name), nil
		}
	}
	return "", err
}

// MountSSHFS starts an sshd on 127.0.0.1 serving a new directory under
// parent and mounts it with sshfs (in the foreground, so that the test
// knows its process) at another; it returns once the mount is there. It
// needs root (SSHFSMissing says what else). Unmount undoes it all.
func MountSSHFS(parent string) (*SSHFS, error) {
	if why := SSHFSMissing(); why != "" {
		return nil, errors.New(why)
	}
	work, err := os.MkdirTemp(parent, "sshfs-")
	if err != nil {
		return nil, err
	}
	m := &SSHFS{work: work, Dir: filepath.Join(work, "mnt"), Remote: filepath.Join(work, "remote"), logs: &bytes.Buffer{}}
	for _, d := range []string{m.Dir, m.Remote} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	for _, k := range []string{"host", "user"} {
		if err := run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "fastcp-test", "-f", filepath.Join(work, k)); err != nil {
			return nil, err
		}
	}
	pub, err := os.ReadFile(filepath.Join(work, "user.pub"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(work, "authorized_keys"), pub, 0o600); err != nil {
		return nil, err
	}
	// sshd refuses to start without its privilege separation directory,
	// which systemd makes for the system's own sshd.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return nil, err
	}
	var port int
	for try := 0; ; try++ {
		port, err = m.startSSHD()
		if err == nil {
			break
		}
		if try == 4 {
			m.Unmount()
			return nil, err
		}
	}
	if err := m.knownHosts(port); err != nil {
		m.Unmount()
		return nil, err
	}
	if err := m.startSSHFS(port); err != nil {
		m.Unmount()
		return nil, err
	}
	return m, nil
}

// knownHosts makes the client's known_hosts: the host key on port.
func (m *SSHFS) knownHosts(port int) error {
	hostPub, err := os.ReadFile(filepath.Join(m.work, "host.pub"))
	if err != nil {
		return err
	}
	f := strings.Fields(string(hostPub))
	known := fmt.Sprintf("[127.0.0.1]:%d %s %s\n", port, f[0], f[1])
	return os.WriteFile(filepath.Join(m.work, "known_hosts"), []byte(known), 0o600)
}

// startSSHD starts sshd on a free port and waits for it to listen.
func (m *SSHFS) startSSHD() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := fmt.Sprintf(`ListenAddress 127.0.0.1
Port %d
HostKey %s
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
PidFile none
Subsystem sftp internal-sftp
`, port, filepath.Join(m.work, "host"), filepath.Join(m.work, "authorized_keys"))
	cfg := filepath.Join(m.work, "sshd_config")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		return 0, err
	}
	sshd, _ := lookPath("sshd")
	cmd := exec.Command(sshd, "-D", "-e", "-f", cfg)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	// Its own process group, so that its sessions go with it; and gone
	// with the test, should that die without unmounting.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	done := make(chan struct{})
	go func() { err := cmd.Wait(); pw.CloseWithError(io.EOF); exited <- err; close(done) }()
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		said := false
		for sc.Scan() {
			m.mu.Lock()
			m.logs.WriteString("sshd: " + sc.Text() + "\n")
			m.mu.Unlock()
			if !said && strings.Contains(sc.Text(), "Server listening on 127.0.0.1 port "+strconv.Itoa(port)) {
				said = true
				close(listening)
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case <-listening:
		m.sshd, m.sshdDone, m.port = cmd, done, port
		return port, nil
	case err := <-exited:
		return 0, fmt.Errorf("sshd ended (%v): %s", err, m.log())
	case <-time.After(20 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return 0, fmt.Errorf("sshd did not listen within 20 s: %s", m.log())
	}
}

// startSSHFS mounts the served directory and waits for the mount.
func (m *SSHFS) startSSHFS(port int) error {
	sshfs, _ := lookPath("sshfs")
	opts := strings.Join([]string{
		"IdentityFile=" + filepath.Join(m.work, "user"),
		"UserKnownHostsFile=" + filepath.Join(m.work, "known_hosts"),
		"StrictHostKeyChecking=yes", "BatchMode=yes", "LogLevel=ERROR",
	}, ",")
	cmd := exec.Command(sshfs, "-f", "-F", "/dev/null", "-p", strconv.Itoa(port), "-o", opts,
		"root@127.0.0.1:"+m.Remote, m.Dir)
	cmd.Stdout, cmd.Stderr = &lockedWriter{m, "sshfs: "}, &lockedWriter{m, "sshfs: "}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	m.sshfs, m.sshfsDone = cmd, make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(m.sshfsDone) }()
	deadline := time.After(20 * time.Second)
	for !m.Mounted() {
		select {
		case <-m.sshfsDone:
			return fmt.Errorf("sshfs ended (%v) before mounting: %s", waitErr, m.log())
		case <-deadline:
			return fmt.Errorf("sshfs did not mount %s within 20 s: %s", m.Dir, m.log())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// Mounted reports whether Dir is an sshfs mount now.
func (m *SSHFS) Mounted() bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		for i, x := range f {
			if x == "-" && i+1 < len(f) && len(f) > 4 && f[4] == m.Dir && f[i+1] == "fuse.sshfs" {
				return true
			}
		}
	}
	return false
}

type lockedWriter struct {
	m      *SSHFS
	prefix string
}

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.m.logs.WriteString(w.prefix)
	return w.m.logs.Write(b)
}

func (m *SSHFS) log() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.TrimSpace(m.logs.String())
}

// Log is what sshd and sshfs said so far, for a test's failure message.
func (m *SSHFS) Log() string { return m.log() }

// KillClient kills sshfs with SIGKILL: the mount stays, and every call on
// it fails (ENOTCONN), as when a mount's daemon dies.
func (m *SSHFS) KillClient() {
	if m.sshfs != nil {
		m.sshfs.Process.Kill()
		<-m.sshfsDone
	}
}

// KillServer kills sshd and the sessions it started (the SFTP server of
// the mount among them), as a server going away does.
func (m *SSHFS) KillServer() {
	if m.sshd != nil {
		for _, p := range descendants(m.sshd.Process.Pid) {
			syscall.Kill(p, syscall.SIGKILL)
		}
		m.sshd.Process.Kill()
		<-m.sshdDone
	}
}

// Remount mounts the served directory again at Dir after KillClient or
// KillServer: the dead mount is detached, sshd started again if it was
// killed (on a new port), and sshfs started anew.
func (m *SSHFS) Remount() error {
	if m.Mounted() {
		if err := run("umount", "-l", m.Dir); err != nil {
			return err
		}
	}
	if m.sshfs != nil {
		m.sshfs.Process.Kill()
		<-m.sshfsDone
		m.sshfs = nil
	}
	port := m.port
	select {
	case <-m.sshdDone:
		m.sshd = nil
		var err error
		for try := 0; ; try++ {
			if port, err = m.startSSHD(); err == nil {
				break
			}
			if try == 4 {
				return err
			}
		}
		if err := m.knownHosts(port); err != nil {
			return err
		}
	default:
	}
	return m.startSSHFS(port)
}

// descendants lists the processes below pid, children first.
func descendants(pid int) []int {
	var out []int
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	for _, f := range strings.Fields(string(b)) {
		if c, err := strconv.Atoi(f); err == nil {
			out = append(out, c)
			out = append(out, descendants(c)...)
		}
	}
	return out
}

// Unmount unmounts Dir (lazily if it is busy or its daemon is dead), stops
// sshfs and sshd, and removes everything MountSSHFS made.
func (m *SSHFS) Unmount() error {
	var err error
	if m.Mounted() {
		if err = run("umount", m.Dir); err != nil {
			err = run("umount", "-l", m.Dir)
		}
	}
	if m.sshfs != nil {
		m.sshfs.Process.Kill()
		<-m.sshfsDone
	}
	if m.sshd != nil {
		m.KillServer()
		syscall.Kill(-m.sshd.Process.Pid, syscall.SIGKILL)
		<-m.sshdDone
	}
	if m.Mounted() {
		return fmt.Errorf("%s is still mounted: %v", m.Dir, err)
	}
	os.RemoveAll(m.work)
	return err
}
