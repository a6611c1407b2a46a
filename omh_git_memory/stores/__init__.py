"""The stores: the local store and its journal, the team layer, the graph of both,
and each store's record of its clone."""
