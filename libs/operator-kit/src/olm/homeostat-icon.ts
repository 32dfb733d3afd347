// The icon a catalog shows for every Homeostat operator: a set point (the dot) held inside a loop.
const svg = [
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">',
  '<circle cx="32" cy="32" r="26" fill="none" stroke="#2f6f8f" stroke-width="6"/>',
  '<path d="M32 6a26 26 0 0 1 26 26" fill="none" stroke="#e07a2f" stroke-width="6"/>',
  '<circle cx="32" cy="32" r="8" fill="#2f6f8f"/>',
  '</svg>',
].join('');

/** The icon as a CSV's spec.icon entry and an olm.package's icon. */
export const homeostatIcon = {
  base64data: Buffer.from(svg).toString('base64'),
  mediatype: 'image/svg+xml',
} as const;
