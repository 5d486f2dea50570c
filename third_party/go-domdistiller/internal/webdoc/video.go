// ORIGINAL: java/webdocument/WebVideo.java

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

package webdoc

import (
	"fmt"
	nurl "net/url"

	"github.com/go-shiori/dom"
	"github.com/markusmobius/go-domdistiller/internal/domutil"
	"github.com/markusmobius/go-domdistiller/internal/stringutil"
	"golang.org/x/net/html"
)

type Video struct {
	BaseElement

	// TODO: Handle multiple nested "source" and "track" tags.
	Element *html.Node
	Width   int
	Height  int
	PageURL *nurl.URL
}

func NewVideo(node *html.Node, pageURL *nurl.URL, width, height int) *Video {
	return &Video{
		Element: node,
		PageURL: pageURL,
		Width:   width,
		Height:  height,
	}
}

func (v *Video) ElementType() string {
	return "video"
}

func (v *Video) GenerateOutput(textOnly bool) string {
	if textOnly {
		return ""
	}

	vNode := dom.Clone(v.Element, false)
	for _, child := range dom.Children(v.Element) {
		childTag := dom.TagName(child)
		if childTag == "source" || childTag == "track" {
			dom.AppendChild(vNode, dom.Clone(child, false))
		}
	}

	if poster := dom.GetAttribute(vNode, "poster"); poster != "" {
		poster = stringutil.CreateAbsoluteURL(poster, v.PageURL)
		dom.SetAttribute(vNode, "poster", poster)
	}

	domutil.MakeAllSrcAttributesAbsolute(vNode, v.PageURL)
	domutil.StripAttributes(vNode)
	return dom.OuterHTML(vNode)
}

func (v *Video) String() string {
	return fmt.Sprintf("ELEMENT %q: html=%q, is_content=%v",
		v.ElementType(), dom.OuterHTML(v.Element), v.isContent)
}
