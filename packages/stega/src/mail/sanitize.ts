import sanitizeHtml from 'sanitize-html';

/** A message's HTML made safe to show, and how many remote images were held back. */
export interface SanitizedHtml {
  html: string;
  remote_images_blocked: number;
}

const TAGS = [...sanitizeHtml.defaults.allowedTags, 'img', 'font', 'center', 'u', 's', 'strike'];

/**
 * Sanitizes mail HTML on the server: no script, style, iframe, form or event handler
 * survives, links open apart (`noopener noreferrer`), and images load only from `data:`
 * or from the message's own inline parts (`cid:` replaced by `inline`, data URIs of
 * the attachment store). Remote images are dropped unless `remoteImages` (a reader asked:
 * loading them tells the sender the mail was read).
 */
export function sanitizeMailHtml(
  html: string,
  options: { remoteImages: boolean; inline: Map<string, string> },
): SanitizedHtml {
  let blocked = 0;
  const out = sanitizeHtml(html, {
    allowedTags: TAGS,
    allowedAttributes: {
      a: ['href', 'title', 'name', 'rel', 'target'],
      img: ['src', 'alt', 'title', 'width', 'height'],
      font: ['color', 'size', 'face'],
      table: ['width', 'border', 'cellpadding', 'cellspacing', 'align'],
      td: ['colspan', 'rowspan', 'align', 'valign', 'width'],
      th: ['colspan', 'rowspan', 'align', 'valign', 'width'],
      '*': ['dir', 'lang'],
    },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowedSchemesByTag: { img: ['data', 'http', 'https'] },
    allowProtocolRelative: false,
    transformTags: {
      a: (tagName, attribs) => ({
        tagName,
        attribs: { ...attribs, rel: 'noopener noreferrer nofollow', target: '_blank' },
      }),
      img: (tagName, attribs) => {
        const src = attribs.src ?? '';
        if (/^cid:/i.test(src)) {
          const data = options.inline.get(src.slice(4).replace(/^<|>$/g, ''));
          return { tagName, attribs: { ...attribs, src: data ?? '' } };
        }
        if (/^data:image\//i.test(src)) return { tagName, attribs };
        // a relative or other-scheme source points nowhere a reader can follow
        if (!/^https?:\/\//i.test(src)) return { tagName, attribs: { ...attribs, src: '' } };
        if (!options.remoteImages) {
          blocked++;
          return { tagName, attribs: { ...attribs, src: '', 'data-blocked': 'remote' } };
        }
        return { tagName, attribs };
      },
    },
    exclusiveFilter: (frame) => frame.tag === 'img' && !frame.attribs.src,
  });
  return { html: out, remote_images_blocked: blocked };
}
