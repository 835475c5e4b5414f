window.__kbSearch("meta",{"n":12,"p":1,"g":1,"c":16,"r":30});
