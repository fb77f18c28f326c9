import type { Catalog } from './index.js';

const et_EE: Catalog = {
};

export default et_EE;
