import type { Catalog } from './index.js';

const be_BY: Catalog = {
};

export default be_BY;
