// ORIGINAL: java/extractors/embeds/*.java

// Copyright (c) 2020 Markus Mobius
//
// Permission is hereby granted, free of charge, to any person obtaining a copy
// of this software and associated documentation files (the "Software"), to deal
// in the Software without restriction, including without limitation the rights
// to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
// copies of the Software, and to permit persons to whom the Software is
// furnished to do so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in all
// copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
// SOFTWARE.

// Copyright 2015 The Chromium Authors. All rights reserved.
// Use of this source code is governed by a BSD-style license that can be
// found in the LICENSE file.

package embed

var (
	rxB64DataURL      = lazyMustCompile(`(?i)^data:\s*([^\s;,]+)\s*;\s*base64\s*`)
	rxSrcsetURL       = lazyMustCompile(`(?i)(\S+)(\s+[\d.]+[xw])?(\s*(?:,|$))`)
	rxImgExtensions   = lazyMustCompile(`(?i)\.(jpg|jpeg|png|webp)`)
	rxLazyImageSrcset = lazyMustCompile(`(?i)\.(jpg|jpeg|png|webp)\s+\d`)
	rxLazyImageSrc    = lazyMustCompile(`(?i)^\s*\S+\.(jpg|jpeg|png|webp)\S*\s*$`)

	figureImageSelectors = []string{
		"noscript picture",
		"noscript img",
		"picture",
		"img",
	}

	lazyImageSrcAttrs = []string{
		"data-src",
		"data-original",
		"datasrc",
		"data-url",
	}

	lazyImageSrcsetAttrs = []string{
		"data-srcset",
		"datasrcset",
	}

	relevantImageTags = map[string]struct{}{
		// TODO: Add "div" to this list for css images and possibly captions.
		"img":     {},
		"picture": {},
		"figure":  {},
		"span":    {},
	}

	relevantTwitterTags = map[string]struct{}{
		"blockquote": {},
		"iframe":     {},
	}

	relevantVimeoTags = map[string]struct{}{
		"iframe": {},
	}

	relevantYouTubeTags = map[string]struct{}{
		"iframe": {},
		"object": {},
	}
)
