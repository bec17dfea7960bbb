'use strict';

/** The items of a 1-based page of `size` items. */
function paginate(items, page, size) {
  const start = page * size; // bug: pages are 1-based
  return items.slice(start, start + size);
}

/** The middle value of a list of numbers (the mean of the two middle values for an even count). */
function median(numbers) {
  if (numbers.length === 0) return undefined;
  const sorted = [...numbers].sort(); // bug: sorts as strings, so 10 comes before 9
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The number of pages needed for `count` items. */
function pageCount(count, size) {
  return Math.ceil(count / size);
}

module.exports = { paginate, median, pageCount };
