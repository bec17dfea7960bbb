'use strict';

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const { paginate, median, pageCount } = require('../src/lists');

describe('paginate', () => {
  const letters = ['a', 'b', 'c', 'd', 'e'];

  test('page 1 is the first page', () => {
    assert.deepEqual(paginate(letters, 1, 2), ['a', 'b']);
  });

  test('the last page may be short', () => {
    assert.equal(pageCount(letters.length, 2), 3);
  });
});

describe('median', () => {
  test('sorts numbers by value', () => {
    assert.equal(median([10, 9, 2]), 9);
  });

  test('averages the two middle values', () => {
    assert.equal(median([1, 3, 2, 4]), 2.5);
  });

  test('is undefined for no numbers', () => {
    assert.equal(median([]), undefined);
  });
});
