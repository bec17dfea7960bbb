'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { slugify, truncate } = require('../src/text');

test('slugify joins every word with a dash', () => {
  assert.equal(slugify('  Green Loop Demo '), 'green-loop-demo');
});

test('truncate keeps short text', () => {
  assert.equal(truncate('short', 10), 'short');
});

test('truncate cuts long text with an ellipsis', () => {
  assert.equal(truncate('a rather long sentence', 8), 'a rathe…');
});
