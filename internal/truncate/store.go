package truncate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/principal"
)

// Store is the full-text store of truncated pages (spec §A10.4): one file
// per URL under Dir, named <host-slug>-<sha256(url)[:10]>.md, overwritten by
// later saves of the same URL. Dir is normally <home>/cache/web and may be
// bind-mounted read-only into sandboxes, hence the non-private permissions.
//
// PathMap translates host paths into the paths the agent's execution backend
// sees (web.agent_visible_paths): each key is a host directory prefix, its
// value the prefix the agent uses. The longest matching key wins; matching
// is on path-component boundaries. A nil map shows host paths unchanged.
//
// A Store value is safe for concurrent use.
type Store struct {
	Dir     string
	PathMap map[string]string
	// ReadTool selects the paging hint of the footer: "" → read_file with the
	// agent-visible path (spec §A10.3); ReadToolWeb → web_read with the store
	// file name, for clients that cannot see this disk (MCP), followed by
	// the page's resource URI when ResourcePrefix is set; ReadToolCLI → the
	// `gatehouse read PATH --offset N` command line (the CLI).
	ReadTool string
	// ResourcePrefix is prepended to the file name to form the MCP resource
	// URI of a stored page (e.g. "gatehouse://store/"); "" shows none.
	ResourcePrefix string
	// Shared, when set, keeps stored pages in shared state (Redis,
	// GATEHOUSE_REDIS_URL; internal/state) instead of files under Dir, so a
	// page stored by one replica is read on another. Names, footers and
	// paths stay as they are (the path <Dir>/<name> is the handle; Load
	// validates it exactly as for files); pages are scoped per principal
	// (bind one with For). Nil is the embedded default: files under Dir.
	Shared PageStore

	ctx       context.Context // bound by For; nil means context.Background()
	principal string          // bound by For; "" means principal.Default
}

// PageStore is where a Store with Shared keeps its pages: name is a store
// file name (IsStoreName), principal the caller's principal. Implementations
// keep a TTL, validate what they read like input, and are safe for
// concurrent use. Errors: the store unreachable (a *reason.Error with code
// state_unavailable), a corrupt value (state_corrupt).
type PageStore interface {
	SavePage(ctx context.Context, principal, name, text string) error
	// LoadPage returns the page; false when principal has no page of that
	// name (another principal's page is not found either).
	LoadPage(ctx context.Context, principal, name string) (text string, ok bool, err error)
}

// For returns s bound to ctx and its principal (principal.From): a Shared
// store saves and loads that principal's pages under ctx's deadline. The
// embedded store ignores the binding.
func (s Store) For(ctx context.Context) Store {
	s.ctx, s.principal = ctx, principal.From(ctx)
	return s
}

func (s Store) bound() (context.Context, string) {
	ctx, p := s.ctx, s.principal
	if ctx == nil {
		ctx = context.Background()
	}
	if p == "" {
		p = principal.Default
	}
	return ctx, p
}

// SaveAs writes text under the store name name (IsStoreName; e.g. a browser
// snapshot's browser-snapshot-<hex>.txt) in the Shared store and returns
// the path <Dir>/<name>. It needs Shared (the embedded browser snapshot
// store writes its own files).
func (s Store) SaveAs(name, text string) (string, error) {
	if s.Shared == nil || s.Dir == "" {
		return "", errors.New("truncate: no shared store configured")
	}
	if !IsStoreName(name) {
		return "", fmt.Errorf("truncate: %q is not a store name", name)
	}
	dir, err := filepath.Abs(s.Dir)
	if err != nil {
		return "", err
	}
	ctx, p := s.bound()
	if err := s.Shared.SavePage(ctx, p, name, validUTF8(text)); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// ReadToolWeb is the Store.ReadTool value for web_read footers.
const ReadToolWeb = "web_read"

// ReadToolCLI is the Store.ReadTool value for CLI footers: the command that
// pages the stored text (`gatehouse read`, which calls web_read).
const ReadToolCLI = "gatehouse read"

// storeMarker is appended to a stored copy that was capped at StoreCap chars.
func storeMarker(original int) string {
	return fmt.Sprintf("\n\n[... stored copy truncated at %s chars of %s; re-extract a more specific URL for the rest ...]",
		commas(StoreCap), commas(original))
}

// FileName returns the store file name for rawURL:
// <HostSlug(rawURL)>-<first 10 hex of sha256(rawURL)>.md.
func FileName(rawURL string) string {
	sum := sha256.Sum256([]byte(rawURL))
	return HostSlug(rawURL) + "-" + hex.EncodeToString(sum[:])[:10] + ".md"
}

// Save writes fullText to <Dir>/FileName(rawURL) and returns the absolute
// host path. Dir is created 0700 if needed (and tightened to 0700 if it
// exists with group/other access); the file is written 0600: stored pages
// can hold private content. (A Gatehouse departure from spec §A10.4, whose
// store is umask-readable for sandbox bind mounts; map the path with
// web.agent_visible_paths and grant access explicitly instead.) Text longer than StoreCap chars
// is cut at StoreCap chars (on a rune boundary) and a marker giving the cap
// and the original length is appended. The file is written with
// WriteNoFollow, so a symlink planted at the path is replaced, never
// followed. When the file already holds exactly this text (a regular file,
// opened without following symlinks), only its modification time is
// refreshed, which keeps repeated cache hits cheap. Errors: Dir unset,
// directory creation, or any write failure.
func (s Store) Save(rawURL, fullText string) (string, error) {
	if s.Dir == "" {
		return "", errors.New("truncate: store directory not configured")
	}
	dir, err := filepath.Abs(s.Dir)
	if err != nil {
		return "", err
	}
	if s.Shared == nil {
		if err := PrivateDir(dir); err != nil {
			return "", err
		}
	}
	text := validUTF8(fullText)
	if n := countValid(text); n > StoreCap {
		text = text[:byteOffsetFromStart(text, StoreCap)] + storeMarker(n)
	}
	if s.Shared != nil {
		return s.SaveAs(FileName(rawURL), text)
	}
	path := filepath.Join(dir, FileName(rawURL))
	if refreshIfSame(path, text) {
		return path, nil
	}
	if err := WriteNoFollow(path, []byte(text), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// refreshIfSame reports whether path is a regular file (not a symlink)
// whose content is exactly text, and if so sets its times to now.
func refreshIfSame(path, text string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !singleLink(fi) || fi.Size() != int64(len(text)) {
		return false
	}
	buf := make([]byte, len(text))
	if _, err := io.ReadFull(f, buf); err != nil || string(buf) != text {
		return false
	}
	if fi.Mode().Perm()&0o077 != 0 {
		_ = f.Chmod(0o600) // a copy written by an older version
	}
	return touch(f) == nil
}

// PrivateDir creates dir (and missing parents) with mode 0700 and, when dir
// already exists with any group or other permission bit, narrows it to
// 0700. Cache and store directories use it: their files can hold private
// page content. An existing dir must be a real directory owned by the
// current user (CheckDir): a symlink at dir is refused, never followed (nor
// chmod-ed through), because the private copies would land wherever it
// points. Errors: creation, CheckDir's refusal, or a chmod failure.
func PrivateDir(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	fi, err := CheckDir(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// CheckDir reports whether dir may hold private page copies without being
// created: it lstat()s dir (a symlink is never followed) and returns its
// FileInfo, or an error when dir is missing, is a symlink, is not a
// directory, or (on Unix) is owned by another user. The extract cache and
// the full-text store check their directory with it before every read and
// write.
func CheckDir(dir string) (os.FileInfo, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return nil, fmt.Errorf("truncate: %s is a symlink; the cache and full-text store directory must be a real directory "+
			"(private page copies must not land where a link points): remove the link and Gatehouse re-creates the directory", dir)
	case !fi.IsDir():
		return nil, fmt.Errorf("truncate: %s is not a directory; remove it and Gatehouse re-creates the cache directory", dir)
	case !ownedBySelf(fi):
		return nil, fmt.Errorf("truncate: %s is owned by another user; the cache and full-text store directory must be your own "+
			"(remove it or set GATEHOUSE_HOME to a directory of yours)", dir)
	}
	return fi, nil
}

// AgentPath maps a host path through s.PathMap (longest matching prefix,
// on path-component boundaries) and returns the agent-visible path; with no
// matching prefix it returns hostPath unchanged.
func (s Store) AgentPath(hostPath string) string {
	if len(s.PathMap) == 0 {
		return hostPath
	}
	keys := make([]string, 0, len(s.PathMap))
	for k := range s.PathMap {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic among keys that clean to the same prefix
	best, bestLen := "", -1
	for _, k := range keys {
		p := cleanPrefix(k)
		if p == "" {
			continue
		}
		if p == "/" || hostPath == p || strings.HasPrefix(hostPath, p+"/") {
			if len(p) > bestLen {
				best, bestLen = k, len(p)
			}
		}
	}
	if bestLen < 0 {
		return hostPath
	}
	p := cleanPrefix(best)
	rest := hostPath
	if p != "/" {
		rest = hostPath[len(p):]
	}
	agent := strings.TrimRight(s.PathMap[best], "/")
	if agent == "" && rest == "" {
		return "/"
	}
	return agent + rest
}

func cleanPrefix(p string) string {
	if strings.TrimSpace(p) == "" {
		return ""
	}
	return filepath.Clean(p)
}

// HostSlug returns the file-name-safe host label used by both the full-text
// store and the extract cache (spec §A9.2): the URL's hostname lower-cased
// (IPv6 brackets removed; "page" when there is none or the URL does not
// parse), ":" replaced by "_", every char outside [A-Za-z0-9._-] replaced by
// "-", cut to 60 chars, leading and trailing "-" stripped; "page" if empty.
func HostSlug(rawURL string) string {
	host := ""
	if u, err := url.Parse(rawURL); err == nil {
		host = strings.ToLower(u.Hostname())
	}
	if host == "" {
		host = "page"
	}
	var b strings.Builder
	n := 0
	for _, r := range host {
		if n == 60 {
			break
		}
		switch {
		case r == ':':
			b.WriteByte('_')
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		n++
	}
	slug := strings.Trim(b.String(), "-")
	if slug == "" {
		return "page"
	}
	return slug
}

// WriteNoFollow writes data to path without ever following a symlink at
// path (spec §A10.4): it lstat()s the path, refuses a directory, unlinks any
// existing entry (a symlink is removed itself; its target is untouched),
// then creates the file with O_CREAT|O_EXCL|O_NOFOLLOW and mode perm (less
// the umask). If another entry appears between unlink and create (a racing
// writer or an attacker), it retries a few times and then fails. Parent
// directories are not created.
func WriteNoFollow(path string, data []byte, perm os.FileMode) error {
	var lastErr error
	for attempt := 0; attempt < 4; attempt++ {
		fi, err := os.Lstat(path)
		switch {
		case err == nil:
			if fi.IsDir() {
				return fmt.Errorf("truncate: refusing to overwrite directory %s", path)
			}
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		case !errors.Is(err, os.ErrNotExist):
			return err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow|syscall.O_CLOEXEC, perm)
		if err != nil {
			if errors.Is(err, os.ErrExist) {
				lastErr = err
				continue
			}
			return err
		}
		_, werr := f.Write(data)
		cerr := f.Close()
		if werr != nil {
			os.Remove(path)
			return werr
		}
		if cerr != nil {
			os.Remove(path)
			return cerr
		}
		return nil
	}
	return fmt.Errorf("truncate: %s keeps reappearing while writing: %w", path, lastErr)
}
