'use strict';
/**
 * The Node flags `npm start` runs the panel with (package.json `config.panelNodeFlags`): the
 * benchmark starts its panel with the same ones, so that it measures what operators run.
 */
const pkg = require('../../package.json');

const PANEL_NODE_FLAGS = String(pkg.config?.panelNodeFlags ?? '').split(/\s+/).filter(Boolean);

module.exports = { PANEL_NODE_FLAGS };
