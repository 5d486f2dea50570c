package mcpserver

import "testing"

// TestPathHider: the home is hidden only where it is a whole path prefix
// (issue 16 item 4), in plain text and in JSON text.
func TestPathHider(t *testing.T) {
	h := newPathHider("/srv/gh/home")
	for _, c := range []struct{ name, in, want string }{
		{"path in a message", "config /srv/gh/home/config.yaml:3:1: bad", "config $GATEHOUSE_HOME/config.yaml:3:1: bad"},
		{"the home itself", `"/srv/gh/home"`, `"$GATEHOUSE_HOME"`},
		{"after a JSON newline escape", `"a\n/srv/gh/home/x"`, `"a\n$GATEHOUSE_HOME/x"`},
		{"a file URL", "file:///srv/gh/home/x", "file://$GATEHOUSE_HOME/x"},
		{"a longer directory name", "/srv/gh/homework/x", "/srv/gh/homework/x"},
		{"inside a URL path", "https://site.test/srv/gh/home/x", "https://site.test/srv/gh/home/x"},
		{"inside another path", "/mnt/srv/gh/home/x", "/mnt/srv/gh/home/x"},
		{"twice", "/srv/gh/home/a /srv/gh/home/b", "$GATEHOUSE_HOME/a $GATEHOUSE_HOME/b"},
		{"absent", "nothing here", "nothing here"},
	} {
		if got := h.hide(c.in); got != c.want {
			t.Errorf("%s: hide(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
	for _, home := range []string{"", "/"} {
		if got := newPathHider(home).hide("/srv/x"); got != "/srv/x" {
			t.Errorf("home %q: %q", home, got)
		}
	}
}
