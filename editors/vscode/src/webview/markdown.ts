// Model text → safe HTML: markdown-it with raw HTML off (tags in the text stay text), then
// DOMPurify as a second line, with images and anything that could load remote content removed.

import createDOMPurify from "dompurify";
import MarkdownIt from "markdown-it";

export type RenderMarkdown = (text: string) => string;

export function markdownRenderer(win: Window): RenderMarkdown {
  const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
  // Only links we can open: web pages, and paths we map to workspace files.
  md.validateLink = (url: string) => !/^\s*(javascript|vbscript|data):/i.test(url);
  const purify = createDOMPurify(win as unknown as Parameters<typeof createDOMPurify>[0]);
  const config = {
    FORBID_TAGS: ["img", "picture", "video", "audio", "source", "iframe", "object", "embed", "form", "input", "style", "link", "svg", "math"],
    FORBID_ATTR: ["style", "srcset"],
    ALLOW_DATA_ATTR: false,
  };
  return (text: string) => purify.sanitize(md.render(text), config) as unknown as string;
}
