module github.com/forPelevin/gomoji

go 1.19

require github.com/rivo/uniseg v0.4.3
