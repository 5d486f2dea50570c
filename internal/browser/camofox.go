package browser

type camofoxBackend struct {
	local bool
}

func (m *Manager) initCamofox(env map[string]string) []string { return nil }
