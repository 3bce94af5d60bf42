const path = require('path');
const m = require(path.join(__dirname, 'pk/mongo/node_modules/mongodb'));
m.MongoClient.prototype.connect = async function () { return this; };
