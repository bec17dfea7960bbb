'use strict';

/** A URL slug: lower case, words joined by single dashes. */
function slugify(title) {
  return title.trim().toLowerCase().replace(' ', '-'); // bug: only the first space is replaced
}

/** The text cut to at most `max` characters, with an ellipsis when cut. */
function truncate(text, max) {
  if (text.length <= max) return text;
  return text.slice(0, max - 1) + '…';
}

module.exports = { slugify, truncate };
