package backendsel

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/config"
)

// Of follows spec §B4's precedence (CDP override, Camofox, cloud provider,
// local) from the configuration alone.
func TestOf(t *testing.T) {
	t.Setenv("BROWSER_CDP_URL", "")
	for _, k := range []string{"CAMOFOX_URL", "BROWSERBASE_API_KEY", "BROWSERBASE_PROJECT_ID", "BROWSER_USE_API_KEY"} {
		t.Setenv(k, "")
	}
	cfg := config.Default()
	if st := Of(cfg, map[string]string{}); st.Backend != "local" || !st.NetworkOurs {
		t.Errorf("default: %+v", st)
	}
	if st := Of(cfg, map[string]string{"CAMOFOX_URL": "http://127.0.0.1:9377"}); st.Backend != "camofox" || st.Endpoint != "127.0.0.1:9377" || !strings.Contains(st.Note, "loopback") {
		t.Errorf("CAMOFOX_URL: %+v", st)
	}
	pinned := config.Default()
	pinned.Browser.CloudProvider, pinned.Browser.CloudProviderSet = "camofox", true
	if st := Of(pinned, map[string]string{}); st.Backend != "camofox" || !strings.Contains(st.Problem, "CAMOFOX_URL is not set") {
		t.Errorf("camofox pinned without CAMOFOX_URL: %+v", st)
	}
	bad := config.Default()
	bad.Browser.CloudProvider, bad.Browser.CloudProviderSet = "nosuch", true
	if st := Of(bad, map[string]string{}); st.Backend != "cloud" || !strings.Contains(st.Problem, `"nosuch"`) {
		t.Errorf("unknown provider: %+v", st)
	}
	t.Setenv("BROWSER_CDP_URL", "http://127.0.0.1:9222")
	if st := Of(pinned, map[string]string{}); st.Backend != "cdp" || st.Endpoint != "127.0.0.1:9222" || !st.NetworkOurs || CDPOverride(pinned) != "http://127.0.0.1:9222" {
		t.Errorf("CDP override: %+v", st)
	}
}
