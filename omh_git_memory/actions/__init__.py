"""The actions: what the commands do, over the stores, recall and expiry."""
