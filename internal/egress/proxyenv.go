package egress

import (
	"fmt"
	"os"
)

// proxyEnvVars are the proxy environment variables of spec §A6.1, in the
// order they are reported.
var proxyEnvVars = []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"}

// proxyEnvSet returns the name of the first proxy environment variable that
// is set to a non-empty value, or "".
func proxyEnvSet() string {
	for _, k := range proxyEnvVars {
		if os.Getenv(k) != "" {
			return k
		}
	}
	return ""
}

// proxyHint is appended to a dns_unresolvable message while a proxy
// environment variable is set. Gatehouse never sends requests through a
// proxy (a departure from spec §A6.3 step 5, where a DNS failure with such
// a variable set is "safe" and the proxy resolves): every connection is
// dialed directly so that the IP it reaches is the IP that was judged. On
// a network reachable only through a proxy, local DNS usually fails, and
// the message must say so instead of sending the user to debug DNS.
func proxyHint() string {
	k := proxyEnvSet()
	if k == "" {
		return ""
	}
	return fmt.Sprintf(" Note: %s is set, but Gatehouse does not use proxies: it resolves every host itself and connects directly, so that each connection is checked on the IP it reaches (SSRF). If this machine reaches the web only through that proxy, Gatehouse cannot fetch from it; allow direct DNS and outbound connections for Gatehouse, or run it where they are allowed.", k)
}
