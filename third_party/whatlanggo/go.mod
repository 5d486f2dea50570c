module github.com/RadhiFadlillah/whatlanggo

go 1.21 // Gatehouse patch: 1.12 upstream; sync.OnceValue needs 1.21
